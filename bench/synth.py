"""Synthetic Claude Code data built from the real fixture transcripts (tests/fixtures/claude).

- `LineFactory`, `seed_session`, `marker`: real transcript lines carrying a marker `BMK<n>Z`, and a
  recorded session as history (tests/harness/agent_lines.py, shared with the fleet soak).
- `write_transcript` repeats every fixture line (sub-agent lines included) up to a byte size.
- `write_archive` builds N sessions spread over W workspaces (distinct `cwd`) up to a total size.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the line makers are the tests' (tests/harness/agent_lines.py)
from tests.harness.agent_lines import (  # noqa: E402
    CWD,
    FIXTURE,
    LineFactory,
    load_records,
    marker,
    seed_session,
)

__all__ = ["CWD", "FIXTURE", "LineFactory", "load_records", "marker", "seed_session"]


def _template_bytes(records: list[dict[str, Any]], cwd: str) -> bytes:
    """All fixture lines once, with placeholders for the per-file session id / uuid prefix."""
    out = []
    for r in records:
        r = dict(r)
        r["sessionId"] = "@@SID@@"
        r["cwd"] = cwd
        if isinstance(r.get("uuid"), str):
            r["uuid"] = "@@U8@@" + r["uuid"][8:]
        if isinstance(r.get("parentUuid"), str):
            r["parentUuid"] = "@@U8@@" + r["parentUuid"][8:]
        out.append(json.dumps(r, ensure_ascii=False))
    return ("\n".join(out) + "\n").encode()


def _fill(template: bytes, sid: str, size: int) -> bytes:
    body = template.replace(b"@@SID@@", sid.encode()).replace(b"@@U8@@", sid[:8].encode())
    if len(body) >= size:  # a prefix of the real session, cut at a line end
        cut = body.rfind(b"\n", 0, size)
        return body[: cut + 1] if cut > 0 else body[: body.index(b"\n") + 1]
    reps = -(-size // len(body))
    return body * reps  # whole lines only; a little over `size`


def write_transcript(
    path: Path, session_id: str, size: int, cwd: str = CWD, *, unique_ids: bool = False
) -> int:
    """A transcript of ≥ `size` bytes made by repeating every fixture line. `unique_ids`: each
    repetition's tool, message and request ids are its own, as a real session's are (a reader
    of the whole session, such as an export, pairs a result with its one call)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    template = _template_bytes(load_records(), cwd)
    body = template.replace(b"@@SID@@", session_id.encode())
    if unique_ids:
        for prefix in (b'"toolu_', b'"msg_', b'"req_'):
            body = body.replace(prefix, prefix + b"@@U8@@")
    written = 0
    with path.open("wb") as fh:
        rep = 0
        while written < size:
            chunk = body.replace(b"@@U8@@", f"{rep:08x}".encode())
            fh.write(chunk)
            written += len(chunk)
            rep += 1
    return written


def write_archive(projects: Path, sessions: int, workspaces: int, total: int) -> dict[str, Any]:
    """`sessions` transcripts over `workspaces` project folders, ≈ `total` bytes in all.

    mtimes are spread over the last 30 days so ordering by activity is meaningful.
    """
    records = load_records()
    per = max(1, total // sessions)
    written = 0
    now = time.time()
    templates = {}
    for i in range(sessions):
        w = i % workspaces
        cwd = f"/home/bench/archive/project-{w:03d}"
        if w not in templates:
            templates[w] = _template_bytes(records, cwd)
        folder = projects / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=i + 1))
        data = _fill(templates[w], sid, per)
        path = folder / f"{sid}.jsonl"
        path.write_bytes(data)
        mtime = now - 30 * 86400 * (1 - i / sessions)
        os.utime(path, (mtime, mtime))
        written += len(data)
    return {"sessions": sessions, "workspaces": workspaces, "bytes": written}
