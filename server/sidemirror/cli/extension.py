"""`sidemirror extension [--zip FILE]`: where the Chrome extension is, for "Load unpacked".
`sidemirror extension install-host`: the native messaging host the extension pairs through
(native_host/).

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
    actions = ext.add_subparsers(
        dest="extension_command", required=False, help="install-host: the pairing host"
    )
    host = actions.add_parser(
        "install-host",
        help="install the native messaging host the extension pairs through",
        description="Write the native messaging host manifest (allowed for the Sidemirror "
        "extension only) into Google Chrome's and Chromium's NativeMessagingHosts folders, "
        "and the launcher it points at. The extension gets the token and the panel "
        "credential through it, from no other program.",
    )
    host.add_argument(
        "--dir",
        type=Path,
        action="append",
        metavar="DIR",
        help="a NativeMessagingHosts folder to write to instead of Chrome's and Chromium's "
        "(repeatable; e.g. <user data dir>/NativeMessagingHosts for a browser started with "
        "--user-data-dir)",
    )
    host.add_argument(
        "--runtime-dir",
        type=Path,
        action="append",
        metavar="DIR",
        help="where the server leaves its runtime file, if not the default (repeatable)",
    )
    host.add_argument(
        "--launcher-dir",
        type=Path,
        metavar="DIR",
        help="where to write the launcher (default: native-host in the default data dir)",
    )
    host.add_argument(
        "--extension-id",
        action="append",
        default=[],
        metavar="ID",
        help="also allow this extension id (as `serve --extension-id`)",
    )


def _write_zip(source: Path, target: Path) -> None:
    import zipfile

    tmp = target.with_name(f".{target.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(source.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(source).as_posix())
    os.replace(tmp, target)


def install_host_command(args: argparse.Namespace) -> int:
    from sidemirror.native_host.manifest import (
        default_manifest_dirs,
        extension_id_of,
        install_host,
    )
    from sidemirror.runtime_file import default_data_dir, default_runtime_dir
    from sidemirror.web.rules import PINNED_EXTENSION_ID

    folder = extension_dir()
    pinned = extension_id_of(folder / MANIFEST) if folder is not None else PINNED_EXTENSION_ID
    ids = list(dict.fromkeys([pinned, *args.extension_id]))
    runtime_dirs = [d.expanduser().absolute() for d in args.runtime_dir or [default_runtime_dir()]]
    launcher_dir = (args.launcher_dir or default_data_dir() / "native-host").expanduser().absolute()
    try:
        written = install_host(args.dir or default_manifest_dirs(), launcher_dir, ids, runtime_dirs)
    except OSError as exc:
        print(f"sidemirror extension install-host: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "extension_command", None) == "install-host":
        return install_host_command(args)
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
