"""The byte-exact mirror of a remote host's agent files: `<data dir>/remote/<label>/<kind>/<path>`.

The mirror's size of a file *is* the offset acknowledged to the forwarder: bytes are appended at
the offset they had on the remote machine, so a frame sent twice (after a reconnect, or a server
killed mid-write) overlaps what is there and only its new tail is written, and a frame that would
leave a gap is refused with the size to resume from. Nothing is lost or doubled whatever is
killed when.

A file's backlog (its bytes up to the moment it is first sent, marked `more` by the forwarder)
is written to `<name>.part`, which no source reads, and renamed into place with its last frame:
the source then finds a whole file, as it finds a local one at start, and reads its tail window
instead of parsing every frame of a 100 MB backlog as it arrives.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from sidemirror.core.private import private_dir

# A host label becomes a folder name and part of workspace names (`LABEL:/dir`).
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# Which local source reads a kind's folder: `claude` is a Claude Code projects folder, `codex`
# a Codex home (with `sessions/` inside).
KINDS = ("claude", "codex")
PART = ".part"  # a file's backlog while it arrives (not `.jsonl`: no source reads it)
MAX_PATH_PARTS = 8  # `<project>/<session>/subagents/agent-x.jsonl`, Codex's `sessions/Y/M/D/x`


class MirrorError(ValueError):
    """A request the mirror refuses: the message says why, for the forwarder's log."""


def check_label(label: str) -> str:
    if not LABEL.fullmatch(label):
        raise MirrorError(f"bad host label {label!r}: letters, digits, '.', '_', '-' (max 64)")
    return label


class HostMirror:
    """One remote host's mirrored files."""

    def __init__(self, root: Path, label: str) -> None:
        self.label = check_label(label)
        self.dir = root / label

    def kind_dir(self, kind: str) -> Path:
        return self.dir / kind

    def path_of(self, key: str) -> Path:
        """`claude/<project>/<file>.jsonl` → its mirror path; anything that could leave the
        host's folder, or is not a transcript, is refused."""
        parts = key.split("/")  # not PurePosixPath: it would quietly drop '.' and '//'
        if (
            len(parts) < 2
            or len(parts) > MAX_PATH_PARTS
            or parts[0] not in KINDS
            or key.startswith("/")
            or any(p in ("", ".", "..") or "\\" in p or "\0" in p for p in parts)
            or not parts[-1].endswith(".jsonl")
        ):
            raise MirrorError(f"refusing file key {key!r}")
        return self.dir.joinpath(*parts)

    def sizes(self) -> dict[str, int]:
        """Every mirrored file's size: the offsets to resume from."""
        out: dict[str, int] = {}
        for kind in KINDS:
            top = self.kind_dir(kind)
            if not top.is_dir():
                continue
            for path in [*top.rglob("*" + PART), *top.rglob("*.jsonl")]:  # a whole file wins
                if path.is_file():
                    key = path.relative_to(self.dir).as_posix().removesuffix(PART)
                    out[key] = path.stat().st_size
        return out

    def last_heard(self) -> float:
        """When this host last sent anything: its newest mirrored file's mtime (0: never). At
        start, before its forwarder is back, that is how long it has been gone."""
        newest = 0.0
        for kind in KINDS:
            for path in self.kind_dir(kind).rglob("*"):
                with contextlib.suppress(OSError):
                    newest = max(newest, path.stat().st_mtime)
        return newest

    def append(self, key: str, offset: int, data: bytes, *, more: bool = False) -> int:
        """Write `data`, which starts at `offset` in the remote file; the mirror's new size.

        Bytes before the mirror's end are already there (sent before an ack was lost); an
        offset past the end is a gap, answered with the size the sender must resume from.
        `more`: more of the file's backlog follows at once (see the module's docstring).
        """
        path = self.path_of(key)
        part = path.with_name(path.name + PART)
        if not path.parent.is_dir():
            # Every folder on the way 0700 whatever the umask: they hold session text.
            private_dir(path.parent)
        staged = not path.exists() and (more or part.exists())
        size = self._write(part if staged else path, offset, data)
        if staged and not more and size >= offset + len(data):
            os.replace(part, path)  # the whole backlog is here: the sources see it at once
        return size

    @staticmethod
    def _write(path: Path, offset: int, data: bytes) -> int:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            size = os.fstat(fd).st_size
            if offset > size:
                return size  # a gap: the sender rewinds to `size`
            new = data[size - offset :]
            while new:
                written = os.write(fd, new)
                new = new[written:]
                size += written
            return size
        finally:
            os.close(fd)

    def truncate(self, key: str, size: int) -> int:
        """The remote file shrank (truncated or replaced): the mirror does the same, and the
        source that reads it sees a truncation as on a local file."""
        path = self.path_of(key)
        path.with_name(path.name + PART).unlink(missing_ok=True)
        if path.exists() and path.stat().st_size > size:
            os.truncate(path, size)
        return path.stat().st_size if path.exists() else 0


def mirror_root(data_dir: Path) -> Path:
    return data_dir / "remote"


def known_hosts(data_dir: Path) -> list[str]:
    root = mirror_root(data_dir)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and LABEL.fullmatch(p.name))
