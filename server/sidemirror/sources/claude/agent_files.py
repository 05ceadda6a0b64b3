"""Sub-agent files: which session each belongs to, read cheaply and kept in the file index.

Sub-agents write `<dir>/<encoded cwd>/agent-<id>.jsonl` (older) or `<session>/subagents/
agent-<id>.jsonl` (newer); the older layout names its session only inside the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidemirror.core.redact import redact_text
from sidemirror.sources.claude.meta import agent_session_id
from sidemirror.sources.files.indexing import mtime

AgentHead = tuple[str | None, float]  # the session it belongs to, and its mtime


def nested(path: Path) -> bool:
    """Whether the file is in the newer layout, where its path names its session."""
    return path.parent.name == "subagents"


def agent_id(path: Path) -> str:
    return path.stem[len("agent-") :]


def session_of_agent(path: Path) -> str | None:
    """The parent session of a sub-agent file: its folder (newer layout) or its `sessionId`."""
    if nested(path):
        return path.parent.parent.name
    return agent_session_id(path)


def agent_files_of(main: Path) -> tuple[list[Path], bool]:
    """A session's newer-layout sub-agent files, and whether its folder holds any older-layout
    one (only reading it says whose it is). Run it in a thread."""
    try:
        nested_files = list(main.with_suffix("").glob("subagents/agent-*.jsonl"))
        flat = any(main.parent.glob("agent-*.jsonl"))
    except OSError:
        return [], False
    return [p for p in nested_files if p.is_file()], flat


def agent_head(path: Path) -> AgentHead:
    """A sub-agent file's session and modification time, read at startup."""
    return session_of_agent(path), mtime(path)


def agent_row(head: AgentHead) -> list[Any] | None:
    """`head` as the file index keeps it; not kept when its session id is one redaction would
    change (the index holds nothing unredacted; such a file is read on every start)."""
    session_id, when = head
    if session_id is None or redact_text(session_id) != session_id:
        return None
    return [session_id, when]


def agent_from_row(_path: Path, row: Any) -> AgentHead | None:
    ok = isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)
    if not ok or not isinstance(row[1], float | int):
        return None
    return row[0], float(row[1])
