"""Files only this OS user can reach: folders 0700, files 0600, whatever the umask says.

The server's folders (data dir, runtime dir) and every file in them hold session text or the
token. Modes are set explicitly after creation (`mkdir` and `open` modes are masked by the
umask, and an existing folder keeps its mode), so a lax umask never widens them.
`untrusted` says why a path another process may have made cannot be trusted.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

TYPE_CHECKING = False  # `typing` is a module import of its own: the hook runs on every tool call
if TYPE_CHECKING:
    from collections.abc import Callable

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """`path` set to 0700, made first if missing, with any missing parents made 0700 too
    (`mkdir(parents=True)` would make those with the umask's mode)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(folder, DIR_MODE)
    os.chmod(path, DIR_MODE)
    return path


def open_private(path: Path, flags: int) -> int:
    """`os.open` creating a 0600 file; an existing file is set to 0600 too."""
    fd = os.open(path, flags | os.O_CREAT, FILE_MODE)
    if hasattr(os, "fchmod"):  # POSIX (Windows keeps its own ACLs: the per-user folders)
        try:
            os.fchmod(fd, FILE_MODE)
        except BaseException:
            os.close(fd)
            raise
    return fd


def write_private(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Write a whole 0600 file atomically (a reader sees the old content or the new, never a
    part). With `exclusive`, raise FileExistsError instead of replacing an existing file."""
    tmp = path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_EXCL)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if exclusive:
            os.link(tmp, path)  # fails if `path` exists, where a rename would replace it
        else:
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def kept_value(path: Path, read: Callable[[Path], str | None], make: Callable[[], str]) -> str:
    """The value kept in the 0600 file `path`, made with `make` the first time. `read` gives the
    file's value, or None when it is missing or unusable (then it is made again). Two processes
    that make it at once agree on the one written first."""
    existing = read(path)
    if existing is not None:
        return existing
    private_dir(path.parent)
    new = make()
    try:
        write_private(path, new + "\n", exclusive=not path.exists())
    except FileExistsError:
        first = read(path)
        if first is None:
            raise
        return first
    return new


def untrusted(path: Path, *, folder: bool) -> str | None:
    """Why `path` cannot be trusted to be ours (None when it can): it must be a real folder or
    regular file (not a symlink), owned by this OS user, and not writable by group or others."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return "it does not exist"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if folder and not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if not folder and not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is not None and st.st_uid != uid:
        return f"it belongs to uid {st.st_uid}, not to you (uid {uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write to it (mode {stat.S_IMODE(st.st_mode):04o})"
    return None
