"""What the session list needs from a Codex rollout (id, cwd, branch, title), cheaply.

Only each file's first 64 KiB is read, and only the lines that can hold those go through
`json.loads` and the parser. What is read is kept in the file index (`head_row`), so a restart
reads only the rollouts that changed.
"""

from __future__ import annotations

import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sidemirror.core.redact import redact_text
from sidemirror.sources.codex.compressed import is_compressed
from sidemirror.sources.codex.compressed import read_head as read_compressed_head
from sidemirror.sources.codex.parser import CodexParser
from sidemirror.sources.files.regular import open_regular
from sidemirror.sources.files.tailer import decode_line
from sidemirror.sources.files.window import window_lines

logger = logging.getLogger(__name__)
HEAD_BYTES = 65536  # the first line (`session_meta`) alone can be tens of KiB of instructions
META_KEYS = (b'"session_meta"', b'"turn_context"')
PROMPT_KEY = b'"user'  # a user message item (`"role":"user"`) or event (`"user_message"`)
TEXTS = ("session_id", "git_branch", "title", "started_at", "parent_thread_id")


@dataclass(frozen=True)
class RolloutHead:
    cwd: str
    session_id: str | None
    git_branch: str | None
    title: str | None  # the first prompt (a sub-agent's with its nickname), redacted
    started_at: str | None
    mtime: float
    parent_thread_id: str | None = None  # a sub-agent's thread: the thread that spawned it


def read_head(path: Path) -> RolloutHead | None:
    """The head of a rollout and its mtime; None until it says which workspace.

    Only the records that carry those reach the parser: the first (early rollouts start with a
    bare meta line), the meta and turn-context lines, and user messages until the first prompt.
    """
    try:
        data, mtime = _read_start(path)
    except Exception:  # unreadable (I/O, or a broken archive): not listed, never fatal
        logger.warning("cannot read the head of %s", path, exc_info=True)
        return None
    head = CodexParser()
    for line in window_lines(data, cut_start=False):
        wanted = (
            head.started_at is None
            or any(k in line for k in META_KEYS)
            or (head.first_prompt is None and PROMPT_KEY in line)
        )
        if wanted:
            ok, record = decode_line(line)
            if ok and record is not None:
                head.feed(record)
    if head.first_prompt is None:
        head.flush()  # a user item that no prompt event followed here: the title, as it would be
    if head.cwd is None:
        return None
    return RolloutHead(
        head.cwd,
        head.session_id,
        head.git_branch,
        head.title,
        head.started_at,
        mtime,
        head.parent_thread_id,
    )


def _read_start(path: Path) -> tuple[bytes, float]:
    if is_compressed(path):
        return read_compressed_head(path, HEAD_BYTES)
    with open_regular(path) as fh:
        return fh.read(HEAD_BYTES), os.fstat(fh.fileno()).st_mtime


def head_row(head: RolloutHead) -> dict[str, Any]:
    """`head` as the file index keeps it: redacted, like everything under the data dir."""
    row = asdict(head)
    for key in ("cwd", *TEXTS):
        if isinstance(row[key], str):
            row[key] = redact_text(row[key])
    return row


def head_from_row(_path: Path, row: Any) -> RolloutHead | None:
    if not isinstance(row, dict) or not isinstance(row.get("cwd"), str):
        return None
    if not isinstance(row.get("mtime"), float | int):
        return None
    session_id, branch, prompt, started_at, parent = (row.get(key) for key in TEXTS)
    texts = (session_id, branch, prompt, started_at, parent)
    if not all(value is None or isinstance(value, str) for value in texts):
        return None
    mtime = float(row["mtime"])
    return RolloutHead(row["cwd"], session_id, branch, prompt, started_at, mtime, parent)
