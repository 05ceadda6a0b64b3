"""A small file system of its own for disk-full tests: a size-capped tmpfs mounted on a temp dir
(a loop-mounted ext4 image where tmpfs cannot be mounted), filled on demand and unmounted after.

Mounting needs root (or CAP_SYS_ADMIN); the test suite runs as root. Nothing here is skipped:
a machine that can mount neither fails the tests that need it, with the reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

PAGE = 4096


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


@contextlib.contextmanager
def small_fs(where: Path, size_kib: int) -> Iterator[Path]:
    """`where` (created) becomes the mount point of a `size_kib` file system until exit."""
    where.mkdir(parents=True, exist_ok=True)
    tmpfs = _run("mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=0700", "tmpfs", str(where))
    image: Path | None = None
    if tmpfs.returncode != 0:
        image = where.with_name(where.name + ".img")
        with image.open("wb") as fh:
            fh.truncate(max(size_kib, 2048) * 1024)
        made = _run("mkfs.ext4", "-q", "-F", "-m", "0", str(image))
        loop = _run("mount", "-o", "loop", str(image), str(where))
        if made.returncode != 0 or loop.returncode != 0:
            raise RuntimeError(
                f"cannot mount a small file system on {where}: tmpfs: {tmpfs.stderr.strip()}; "
                f"loop: {made.stderr.strip()} {loop.stderr.strip()}"
            )
    try:
        yield where
    finally:
        if _run("umount", str(where)).returncode != 0:
            _run("umount", "-l", str(where))  # a server still holding a file: detach lazily
        if image is not None:
            image.unlink(missing_ok=True)


def fill(mount: Path, name: str = "filler") -> Path:
    """Take every free block of the file system at `mount`; returns the filler file."""
    path = mount / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for chunk in (1 << 20, 64 << 10, PAGE, 512, 1):
            block = b"\0" * chunk
            while True:
                try:
                    if os.write(fd, block) < chunk:
                        break
                except OSError as exc:
                    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                        raise
                    break
    finally:
        os.close(fd)
    return path


def free_bytes(mount: Path) -> int:
    st = os.statvfs(mount)
    return st.f_bavail * st.f_frsize
