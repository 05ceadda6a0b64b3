"""Listing an archive's folders cheaply: `os.scandir`, a file's path joined to its folder's, and a
`stat` only where a directory entry's type is not known (a symlink, some file systems).

A glob (`Path.rglob`) costs more than the stat of what it finds: it builds a `Path` for every
entry, walks the tree once per pattern, and has no depth bound. Files are stated once, later, by
`indexing.newest_first` (size and mtime, for the file index and the newest-first order).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)


def entries(path: str | Path) -> list[os.DirEntry[str]]:
    """What `path` holds; nothing when it is not a readable directory (gone meanwhile, or a
    session without sub-agents)."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # following symlinks, as a glob does
    except OSError:
        return False


def walk(root: Path, depth: int, accept: Callable[[str], bool]) -> list[Path]:
    """The entries under `root` whose name `accept` takes, in `root` and in its folders down to
    `depth` levels below it (the depth the watcher watches: a file deeper is never followed)."""
    found: list[Path] = []
    folders = [(root, 0)]
    while folders:
        folder, level = folders.pop()
        for entry in entries(folder):
            if accept(entry.name):
                found.append(folder / entry.name)
            elif level < depth and is_dir(entry):
                folders.append((folder / entry.name, level + 1))
    return found


def distinct_dirs(dirs: list[Path], label: str) -> list[Path]:
    """Each dir once even when reached by two paths (symlinks, `~` and `$HOME`); a dir that does
    not exist yet is kept: the watcher waits for it (an agent creates it on first use). `label`
    names the dirs in the log ("Claude Code directory")."""
    seen: set[Path] = set()
    out: list[Path] = []
    for d in dirs:
        real = d.expanduser().resolve()
        if real.exists() and not real.is_dir():
            logger.warning("%s %s is not a directory; not watching it", label, d)
            continue
        if not real.exists():
            logger.info("%s %s does not exist yet; watching for it", label, d)
        if real not in seen:
            seen.add(real)
            out.append(real)
    return out
