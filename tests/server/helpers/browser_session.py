"""A Claude Code session that drove a browser through Playwright MCP, with the activity the
browser reported meanwhile: the shared scenario of the browser-link tests (server and e2e).

The transcript's records are the real ones of a recorded Claude Code 1.0.98 session
(tests/fixtures/claude/sample-project/1af7fc5e…, MIT): its user prompt, its `tool_use` record and
its `tool_result` record are reused as they are, with only the tool, its input, ids and times
changed to those of the plan below. `PLAN` says which call each activity entry falls in, so a test
knows the links to expect without computing them the way the server does.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

FIXTURE = (Path(__file__).resolve().parents[2] / "fixtures/claude/sample-project"
           / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")  # fmt: skip
SESSION = "5b7c2a1e-0b6d-4c1e-9a51-2f1f8e3c9d40"
CWD = "/home/dev/shop"
OTHER_CWD = "/home/dev/elsewhere"


@dataclass(frozen=True)
class PlannedCall:
    key: str
    name: str
    input: dict[str, Any]
    start: float  # seconds after the session's start
    end: float


CALLS = [
    PlannedCall(
        "edit1", "Edit", {"file_path": f"{CWD}/app.js", "old_string": "a", "new_string": "b"}, 1, 2
    ),  # fmt: skip
    PlannedCall(
        "nav",
        "mcp__playwright__browser_navigate",
        {"url": "http://localhost:3000/dashboard"},
        10,
        13,
    ),
    PlannedCall("bash", "Bash", {"command": "npm test"}, 20, 25),
    PlannedCall(
        "click", "mcp__playwright__browser_click", {"element": "Log in", "ref": "e5"}, 30, 34
    ),
    PlannedCall(
        "edit2",
        "Edit",
        {"file_path": f"{CWD}/login.js", "old_string": "x", "new_string": "y"},
        40,
        41,
    ),  # fmt: skip
    PlannedCall(
        "nav2",
        "mcp__playwright__browser_navigate",
        {"url": "http://localhost:3000/settings"},
        50,
        53,
    ),
]
TOOL_IDS = {c.key: f"toolu_01BrowserLink{c.key.capitalize():0<12}" for c in CALLS}


def _entry(at: float, kind: str, command: str, **extra: Any) -> dict[str, Any]:
    return {"at": at, "type": kind, "command": command, "workspace": CWD, "source": "cdp",
            **extra}  # fmt: skip


# (entry, the call key it must be linked to or None). Boundaries are inclusive.
PLAN: list[tuple[dict[str, Any], str | None]] = [
    (_entry(5, "console", "console.error", error="stale warning", status="error"), None),
    (_entry(10.5, "navigation", "navigate", url="http://localhost:3000/dashboard"), "nav"),
    (_entry(11, "console", "console.error", error="Failed to load widget", status="error"), "nav"),
    (
        _entry(
            12,
            "error",
            "request.failed",
            args=["POST", "http://localhost:3000/api/session", "500"],
            error="HTTP 500 Internal Server Error",
            status="error",
        ),
        "nav",
    ),
    (_entry(13, "console", "console.error", error="Uncaught (in promise)", status="error"), "nav"),
    (_entry(15, "console", "console.error", error="between calls", status="error"), None),
    # During Bash: linked because a tool reported an entry naming that call (the next one).
    (_entry(22, "console", "console.error", error="during the tests", status="error"), "bash"),
    (_entry(23, "command_end", "screenshot", tool_use_id="@bash", source="agent"), "bash"),
    (
        _entry(
            31,
            "error",
            "request.failed",
            args=["GET", "http://localhost:3000/api/me", "401"],
            error="HTTP 401 Unauthorized",
            status="error",
        ),
        "click",
    ),
    (_entry(32, "navigation", "navigate", url="http://localhost:3000/login"), "click"),
    (_entry(33.5, "console", "console.error", error="Login failed", status="error"), "click"),
    (_entry(45, "console", "console.error", error="TypeError: user is null", status="error"), None),
    (_entry(51, "navigation", "navigate", url="http://localhost:3000/settings"), "nav2"),
    (
        _entry(
            52,
            "error",
            "exception",
            error="ReferenceError: theme is not defined",
            args=["at render (http://localhost:3000/settings.js:7:3)"],
            status="error",
        ),
        "nav2",
    ),
]
# Inside a browser call's window, but another workspace's: never linked to this session.
FOREIGN = {**_entry(11.5, "console", "console.error", error="other project", status="error"),
           "workspace": OTHER_CWD}  # fmt: skip


def iso(base: datetime, at: float) -> str:
    return (base + timedelta(seconds=at)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def transcript_lines(base: datetime) -> list[str]:
    records = [json.loads(line) for line in FIXTURE.read_text().splitlines()[:5]]
    prompt, use, result = records[0], records[3], records[4]
    out: list[dict[str, Any]] = []
    parent: str | None = None

    def add(record: dict[str, Any], at: float) -> None:
        nonlocal parent
        record = copy.deepcopy(record)
        record.update(sessionId=SESSION, cwd=CWD, timestamp=iso(base, at), parentUuid=parent,
                      uuid=f"00000000-0000-4000-8000-{len(out):012d}")  # fmt: skip
        record.pop("toolUseResult", None)
        parent = record["uuid"]
        out.append(record)

    first = copy.deepcopy(prompt)
    first["message"]["content"] = "Fix the login flow and check it in the browser."
    add(first, 0)
    for call in CALLS:
        tool_use = copy.deepcopy(use)
        tool_use["message"]["content"] = [{"type": "tool_use", "id": TOOL_IDS[call.key],
                                           "name": call.name, "input": call.input}]  # fmt: skip
        tool_use["message"]["id"] = f"msg_{call.key}"
        add(tool_use, call.start)
        done = copy.deepcopy(result)
        done["message"]["content"] = [{"tool_use_id": TOOL_IDS[call.key], "type": "tool_result",
                                       "content": f"{call.key} done"}]  # fmt: skip
        add(done, call.end)
    return [json.dumps(r, separators=(",", ":")) + "\n" for r in out]


def write_transcript(projects: Path, base: datetime) -> Path:
    folder = projects / "-home-dev-shop"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(transcript_lines(base)))
    return path


def activity_body(base: datetime) -> list[dict[str, Any]]:
    """The entries to POST to /api/activity, in time order (the foreign one among them)."""
    body = []
    for raw, _ in sorted([*PLAN, (FOREIGN, None)], key=lambda p: p[0]["at"]):
        entry = {k: v for k, v in raw.items() if k != "at"}
        entry["ts"] = iso(base, raw["at"])
        if entry.get("tool_use_id") == "@bash":
            entry["tool_use_id"] = TOOL_IDS["bash"]
        body.append(entry)
    return body


def expected_counts() -> dict[str, int]:
    counts = {c.key: 0 for c in CALLS}
    for _, key in PLAN:
        if key is not None:
            counts[key] += 1
    return counts


def session_base() -> datetime:
    """A start a few minutes ago, so every time of the plan is in the past."""
    return datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


def record(kind: str, content: Any, ts: str, n: int, session: str, cwd: str) -> str:
    """One line of the real fixture (its prompt, tool_use or tool_result record) with this
    session's content, time and place: for tests that write a transcript as a call runs."""
    lines = FIXTURE.read_text().splitlines()
    base = json.loads(lines[{"prompt": 0, "use": 3, "result": 4}[kind]])
    base.pop("toolUseResult", None)
    base.update(sessionId=session, cwd=cwd, timestamp=ts, uuid=f"00000000-0000-4000-9000-{n:012d}")
    base["message"]["content"] = content
    return json.dumps(base) + "\n"
