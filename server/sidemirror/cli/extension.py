"""`sidemirror extension [--zip FILE]`: where the Chrome extension is, for "Load unpacked".

An installed package carries the extension as package data (`sidemirror/extension/`, see
pyproject.toml); a checkout has it at the top of the repository. Either way the folder printed
is one Chrome can load as it is (its manifest.json at the top).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import sidemirror

MANIFEST = "manifest.json"


def extension_dir() -> Path | None:
    """The extension folder: the installed copy, else the checkout's; None if neither exists."""
    package = Path(sidemirror.__file__).resolve().parent
    for candidate in (package / "extension", package.parents[1] / "extension"):
        if (candidate / MANIFEST).is_file():
            return candidate
    return None


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ext = sub.add_parser(
        "extension",
        help="print the Chrome extension's folder (for Load unpacked), or write it as a zip",
        description="Print the folder to choose in chrome://extensions → Developer mode → "
        "Load unpacked. With --zip, write the extension to FILE instead (unzip it where "
        "Chrome can read it, then load that folder).",
    )
    ext.add_argument("--zip", type=Path, metavar="FILE", help="write the extension to FILE")


def _write_zip(source: Path, target: Path) -> None:
    import zipfile

    tmp = target.with_name(f".{target.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(source.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(source).as_posix())
    os.replace(tmp, target)


def run(args: argparse.Namespace) -> int:
    folder = extension_dir()
    if folder is None:
        print(
            "sidemirror extension: this installation carries no extension folder "
            "(reinstall the package, or use the checkout's extension/)",
            file=sys.stderr,
        )
        return 1
    if args.zip is None:
        print(folder)
        return 0
    try:
        _write_zip(folder, args.zip)
    except OSError as exc:
        print(f"sidemirror extension: cannot write {args.zip}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.zip} (the extension from {folder})")
    return 0
