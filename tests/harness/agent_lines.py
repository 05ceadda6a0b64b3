"""Real-shaped agent lines that carry a marker, for benches and soaks that append to live files.

Built from the repository's recorded fixtures, so the server parses exactly what an agent
writes:
- `LineFactory`: Claude Code transcript lines (assistant text and tool results of the main chain
  of a recorded session) with fresh uuid / message.id / timestamp;
- `CodexLines`: Codex rollout lines (the assistant `response_item` messages of a recorded
  rollout) with a fresh timestamp.
Each carries a unique marker `BMK<n>Z` at the start of its text, so a client can find the moment
the line's content first shows up in a stream or page (the marker survives JSON, HTML escaping and
500-char truncation). `seed_session` / `seed_codex` write a whole recorded session as history.
bench/ (synth.py, fleet.py) and tests/reliability (the fleet soak) share them.
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.harness.paths import FIXTURES

FIXTURE = FIXTURES / "claude/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
CODEX_FIXTURE = (
    FIXTURES / "codex/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)
CWD = "/home/bench/sidemirror-bench"


def marker(n: int) -> str:
    return f"BMK{n:07d}Z"


def load_records(path: Path = FIXTURE) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def now_iso() -> str:
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
        r["timestamp"] = now_iso()
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


class CodexLines:
    """Real Codex assistant replies (`response_item` messages of the fixture), rewritten to carry
    marker n and a fresh timestamp."""

    def __init__(self) -> None:
        self.templates = [
            r
            for r in load_records(CODEX_FIXTURE)
            if r["type"] == "response_item"
            and r["payload"].get("type") == "message"
            and r["payload"].get("role") == "assistant"
        ]

    def line(self, n: int) -> bytes:
        r = copy.deepcopy(self.templates[n % len(self.templates)])
        r["timestamp"] = now_iso()
        block = r["payload"]["content"][0]
        block["text"] = f"{marker(n)} {block['text']}"
        return (json.dumps(r, ensure_ascii=False) + "\n").encode()


def seed_codex(codex_home: Path, sid: str, cwd: str) -> Path:
    """The recorded rollout as session `sid` in `cwd`, under `codex_home`/sessions/Y/M/D."""
    day = time.strftime("%Y/%m/%d")
    name = f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
    path = codex_home / "sessions" / day / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for r in load_records(CODEX_FIXTURE):
            if r["type"] == "session_meta":
                r["payload"]["id"] = sid
                r["payload"]["cwd"] = cwd
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path
