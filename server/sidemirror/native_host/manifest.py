"""The native messaging host manifest and its launcher, as `sidemirror extension install-host`
writes them.

Chrome looks for `<name>.json` in its NativeMessagingHosts folders (on Linux
~/.config/google-chrome/NativeMessagingHosts and ~/.config/chromium/NativeMessagingHosts, or
`<user data dir>/NativeMessagingHosts` for a browser started with --user-data-dir). The
manifest allows the Sidemirror extension's id only, and points at a launcher: a small shell
script that runs this Python on `sidemirror.native_host`, with the ids it answers and the
runtime folder the server uses.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import sidemirror
from sidemirror.core.private import private_dir

# Chrome's rule: lowercase letters, digits, `_` and `.`; no leading, trailing or double dot.
HOST_NAME = "com.sidemirror.pair"
LAUNCHER_NAME = "sidemirror-pair-host"
MANIFEST_MODE = 0o644  # Chrome reads it; nothing secret in it; nobody else may write it
LAUNCHER_MODE = 0o700


def extension_id_from_key(key_b64: str) -> str:
    """The id Chrome gives an extension whose manifest has this `key`: the first 128 bits of
    the SHA-256 of the public key, each hex digit 0-f written as a letter a-p."""
    digest = hashlib.sha256(base64.b64decode(key_b64)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(d, 16)) for d in digest)


def extension_id_of(manifest_path: Path) -> str:
    """The pinned id of the extension whose manifest.json is at `manifest_path`."""
    key = json.loads(manifest_path.read_text(encoding="utf-8"))["key"]
    return extension_id_from_key(str(key))


def default_manifest_dirs() -> list[Path]:
    """The per-user folders of Google Chrome and Chromium (Linux; macOS has its own)."""
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
        return [base / "Google" / "Chrome" / "NativeMessagingHosts",
                base / "Chromium" / "NativeMessagingHosts"]  # fmt: skip
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [config / "google-chrome" / "NativeMessagingHosts",
            config / "chromium" / "NativeMessagingHosts"]  # fmt: skip


def host_manifest(launcher: Path, extension_ids: list[str]) -> dict[str, Any]:
    return {
        "name": HOST_NAME,
        "description": "Sidemirror: pairs the extension with your Sidemirror server",
        "path": str(launcher),
        "type": "stdio",
        "allowed_origins": [f"chrome-extension://{i}/" for i in extension_ids],
    }


def launcher_script(extension_ids: list[str], runtime_dirs: list[Path]) -> str:
    """The script Chrome runs: this interpreter on this copy of the package (whatever
    PYTHONPATH the browser was started with)."""
    package_root = Path(sidemirror.__file__).resolve().parents[1]
    args = [sys.executable, "-m", "sidemirror.native_host"]
    for i in extension_ids:
        args += ["--allow", i]
    for d in runtime_dirs:
        args += ["--runtime-dir", str(d)]
    command = " ".join(shlex.quote(a) for a in args)
    return (
        "#!/bin/sh\n"
        "# Written by `sidemirror extension install-host`: Chrome runs this for the Sidemirror\n"
        "# extension (native messaging), to pair it with your server.\n"
        f'PYTHONPATH={shlex.quote(str(package_root))} exec {command} "$@"\n'
    )


def _write(path: Path, text: str, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)  # the umask narrowed or widened `mode`: set it exactly
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def install_host(
    manifest_dirs: list[Path],
    launcher_dir: Path,
    extension_ids: list[str],
    runtime_dirs: list[Path],
) -> list[Path]:
    """Write the launcher (0700, in a 0700 folder) and a manifest in each folder; the manifests
    written, in order."""
    private_dir(launcher_dir)
    launcher = launcher_dir / LAUNCHER_NAME
    _write(launcher, launcher_script(extension_ids, runtime_dirs), LAUNCHER_MODE)
    text = json.dumps(host_manifest(launcher, extension_ids), indent=2) + "\n"
    written = []
    for folder in manifest_dirs:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{HOST_NAME}.json"
        _write(target, text, MANIFEST_MODE)
        written.append(target)
    return written
