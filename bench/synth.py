"""Synthetic Claude Code data built from the real fixture transcripts (tests/fixtures/claude).

- `LineFactory` yields *real* transcript lines (assistant text and tool results of the main chain,
  taken from a recorded session) with fresh uuid / message.id / timestamp and a unique marker
  `BMK<n>Z` at the start of their text, so any client can find the moment the line's content first
  shows up in a stream or page (the marker survives JSON, HTML escaping and 500-char truncation).
- `write_transcript` repeats every fixture line (sub-agent lines included) up to a byte size.
- `write_archive` builds N sessions spread over W workspaces (distinct `cwd`) up to a total size.
"""

from __future__ import annotations

import copy
import json
import os
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests/fixtures/claude/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
CWD = "/home/bench/sidemirror-bench"


def marker(n: int) -> str:
    return f"BMK{n:07d}Z"


def load_records(path: Path = FIXTURE) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _main_chain_templates(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Main-chain assistant text lines and tool_result lines whose text can carry a marker."""
    out = []
    for r in records:
        if r.get("isSidechain") or r.get("isMeta"):
            continue
        content = (r.get("message") or {}).get("content")
        if not isinstance(content, list) or not content:
            continue
        block = content[0]
        if (
            r.get("type") == "assistant"
            and block.get("type") == "text"
            or r.get("type") == "user"
            and block.get("type") == "tool_result"
        ):
            out.append(r)
    if not out:
        raise SystemExit(f"no usable lines in {FIXTURE}")
    return out


def _put_marker(record: dict[str, Any], mark: str) -> None:
    block = record["message"]["content"][0]
    if block["type"] == "text":
        block["text"] = f"{mark} {block['text']}"
        return
    inner = block.get("content")
    if isinstance(inner, str):
        block["content"] = f"{mark} {inner}"
    elif isinstance(inner, list) and inner and inner[0].get("type") == "text":
        inner[0]["text"] = f"{mark} {inner[0]['text']}"
    else:
        block["content"] = f"{mark} (result)"


class LineFactory:
    """Real lines, rewritten to belong to `session_id` and to carry marker n."""

    def __init__(self, session_id: str, cwd: str = CWD, *, short: bool = False) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.templates = _main_chain_templates(load_records())
        if short:  # fanout: assistant text only, so one line = one event of a few hundred bytes
            self.templates = [t for t in self.templates if t["type"] == "assistant"]
        self.parent: str | None = None

    def line(self, n: int) -> bytes:
        r = copy.deepcopy(self.templates[n % len(self.templates)])
        r["sessionId"] = self.session_id
        r["cwd"] = self.cwd
        r["uuid"] = str(uuid.uuid4())
        r["parentUuid"] = self.parent
        r["timestamp"] = _now_iso()
        self.parent = r["uuid"]
        msg = r["message"]
        if r["type"] == "assistant":
            msg["id"] = f"msg_bench{n:09d}"
            r["requestId"] = f"req_bench{n:09d}"
            msg["stop_reason"] = None  # mid-turn: no turn_complete per line
        else:
            block = msg["content"][0]
            block["tool_use_id"] = f"toolu_bench{n:09d}"
        _put_marker(r, marker(n))
        return (json.dumps(r, ensure_ascii=False) + "\n").encode()


def seed_session(path: Path, session_id: str, cwd: str = CWD) -> None:
    """A real transcript (the whole fixture) as the session's history, rewritten to `session_id`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in load_records():
            r["sessionId"] = session_id
            r["cwd"] = cwd
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


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
