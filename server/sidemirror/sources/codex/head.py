"""What the session list needs from a Codex rollout (id, cwd, branch, first prompt), cheaply.

Only each file's first 64 KiB is read, and only the lines that can hold those go through
`json.loads` and the parser. What is read is kept in the file index (`head_row`), so a restart
reads only the rollouts that changed.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sidemirror.core.redact import redact_text
from sidemirror.sources.codex.parser import CodexParser
from sidemirror.sources.files.regular import open_regular
from sidemirror.sources.files.tailer import decode_line
from sidemirror.sources.files.window import window_lines

HEAD_BYTES = 65536  # the first line (`session_meta`) alone can be tens of KiB of instructions
META_KEYS = (b'"session_meta"', b'"turn_context"')
PROMPT_KEY = b'"user'  # a user message item (`"role":"user"`) or event (`"user_message"`)
TEXTS = ("session_id", "git_branch", "first_prompt", "started_at")


@dataclass(frozen=True)
class RolloutHead:
    cwd: str
    session_id: str | None
    git_branch: str | None
    first_prompt: str | None  # redacted by the parser
    started_at: str | None
    mtime: float


def read_head(path: Path) -> RolloutHead | None:
    """The head of a rollout and its mtime; None until it says which workspace.

    Only the records that carry those reach the parser: the first (early rollouts start with a
    bare meta line), the meta and turn-context lines, and user messages until the first prompt.
    """
    try:
        with open_regular(path) as fh:
            mtime = os.fstat(fh.fileno()).st_mtime
            data = fh.read(HEAD_BYTES)
    except OSError:
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
    if head.cwd is None:
        return None
    return RolloutHead(
        head.cwd, head.session_id, head.git_branch, head.first_prompt, head.started_at, mtime
    )


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
    session_id, branch, prompt, started_at = (row.get(key) for key in TEXTS)
    if not all(value is None or isinstance(value, str) for value in (session_id, branch, prompt)):
        return None
    if not (started_at is None or isinstance(started_at, str)):
        return None
    return RolloutHead(row["cwd"], session_id, branch, prompt, started_at, float(row["mtime"]))
