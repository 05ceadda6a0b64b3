"""What the session list needs from a Claude Code transcript (cwd, title, branch, start), cheaply.

Startup indexes every archived session, so this reads little and decodes less: the first 16 KiB
(grown to 64 KiB only when they hold no `cwd`, or nothing to title the session by) and the last
64 KiB, and only lines whose bytes contain a key it is looking for go through `json.loads`. The
few records that decide the title go through `ClaudeParser` and `Titles` themselves, so titles
are what a full parse of those windows gives (redacted, one line, the first real prompt), without
parsing the rest; a `summary` counts when its leaf's uuid is in a window read (titles.py). Files
of up to 64 KiB are read once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.titles import Titles, prompt_title
from sidemirror.sources.files.regular import open_regular, read_ends
from sidemirror.sources.files.window import Window

HEAD_BYTES = 16384
HEAD_MAX_BYTES = 65536
TAIL_BYTES = 65536
AGENT_HEAD_BYTES = 16384
TITLE_KEYS = (b'"summary"', b'"custom-title"')
# Sessions outside a git repo record `"gitBranch":""` on every line: skip those undecoded.
BRANCH = re.compile(rb'"gitBranch"\s*:\s*"[^"]')


@dataclass
class Meta:
    cwd: str
    title: str | None
    started_at: str | None
    branch: str | None
    mtime: float


def _str(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    return value if isinstance(value, str) and value else None


class _Window:
    """The metadata one window gives, with the semantics of `ClaudeParser` fed all its lines."""

    def __init__(self, window: Window, *, prompts: bool) -> None:
        self.window = window
        self.cwd: str | None = None
        self.started_at: str | None = None
        for record in window.records_with(b'"cwd"', b'"timestamp"'):
            self.cwd = self.cwd or _str(record, "cwd")
            self.started_at = self.started_at or _str(record, "timestamp")
            if self.cwd and self.started_at:
                break
        # Titles: the last summary or custom title that counts wins (`_title`). The first
        # prompt: the first user record the parser takes as a real prompt (not a tool result,
        # command echo or injected text).
        self.titles = [
            record
            for record in window.records_with(*TITLE_KEYS)
            if record.get("type") in ("summary", "custom-title")
        ]
        self.first_prompt: str | None = None
        if prompts:
            for record in window.records_with(b'"user"'):
                # A sub-agent's prompt is never the session's (the parser routes it away).
                if record.get("type") == "user" and record.get("isSidechain") is not True:
                    self.first_prompt = prompt_title(record)
                    if self.first_prompt is not None:
                        break

    def branch(self) -> str | None:
        for record in self.window.last_records_matching(BRANCH):
            branch = _str(record, "gitBranch")
            if branch:
                return branch
        return None


def read_meta(path: Path) -> Meta | None:
    """cwd, title, branch and start of a transcript; None if it cannot say which workspace yet."""
    try:
        data, end, st = read_ends(path, HEAD_BYTES, TAIL_BYTES, HEAD_MAX_BYTES)
        if not end:
            whole = Window(data, cut_start=False)
            return _meta(_Window(whole, prompts=True), None, st.st_mtime)
        head = _Window(Window(data, cut_start=False), prompts=True)
        tail = _Window(Window(end, cut_start=True), prompts=False)
        if head.cwd is None or not (_title(head, tail) or head.first_prompt):
            # Said nothing useful in 16 KiB (a huge first record): look as far as 64 KiB.
            with open_regular(path) as fh:
                data = fh.read(HEAD_MAX_BYTES)
            head = _Window(Window(data, cut_start=False), prompts=True)
    except OSError:
        return None
    return _meta(head, tail, st.st_mtime)


def _meta(head: _Window, tail: _Window | None, mtime: float) -> Meta | None:
    cwd = head.cwd or (tail.cwd if tail else None)
    if cwd is None:
        return None
    title = _title(head, tail) or head.first_prompt
    branch = (tail.branch() if tail else None) or head.branch()
    return Meta(cwd, title, head.started_at, branch, mtime)


def _title(head: _Window, tail: _Window | None) -> str | None:
    """The title the summaries and custom titles read give; a summary's leaf must be a record
    in a window read (its `"uuid"` there)."""
    windows = [head] if tail is None else [head, tail]

    def seen(uuid: str) -> bool:
        key = re.compile(rb'"uuid"\s*:\s*"' + re.escape(uuid.encode()) + b'"')
        return any(key.search(w.window.data) for w in windows)

    titles = Titles(seen)
    for window in windows:
        for record in window.titles:
            titles.record(record)
    return titles.title


# Bump when what a row means changes: rows of another version are read again. 2: a summary of
# another session no longer titles one (titles.py).
ROW_VERSION = 2

# A project's sessions all name the same cwd, and mostly the same branch: redacted once each.
_redact_repeated = lru_cache(maxsize=1024)(redact_text)


def meta_row(meta: Meta) -> dict[str, Any]:
    """`meta` as the file index keeps it: redacted, like everything under the data dir."""
    return {
        "cwd": _redact_repeated(meta.cwd),
        "title": None if meta.title is None else redact_text(meta.title),
        "started_at": None if meta.started_at is None else redact_text(meta.started_at),
        "branch": None if meta.branch is None else _redact_repeated(meta.branch),
        "mtime": meta.mtime,
        "v": ROW_VERSION,
    }


def meta_from_row(_path: Path, row: Any) -> Meta | None:
    """A `meta_row` read back; None when it is not one (then the file is read again)."""
    if not isinstance(row, dict) or row.get("v") != ROW_VERSION:
        return None
    cwd, mtime = row.get("cwd"), row.get("mtime")
    if not isinstance(cwd, str) or not isinstance(mtime, float | int):
        return None
    title, started_at, branch = (row.get(key) for key in ("title", "started_at", "branch"))
    if not all(value is None or isinstance(value, str) for value in (title, started_at, branch)):
        return None
    return Meta(cwd, title, started_at, branch, float(mtime))


def agent_session_id(path: Path) -> str | None:
    """The `sessionId` a sub-agent file records (its first line that has one)."""
    try:
        with open_regular(path) as fh:
            data = fh.read(AGENT_HEAD_BYTES)
    except OSError:
        return None
    for record in Window(data, cut_start=False).records_with(b'"sessionId"'):
        session_id = record.get("sessionId")
        if isinstance(session_id, str):
            return session_id
    return None
