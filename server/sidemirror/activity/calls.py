"""A session's tool calls as time windows: when each started, when its result came, which turn.

`SessionCalls` scans a session log incrementally (logs only grow, or restart under a new epoch),
so asking again after new items costs only the new items. A call's window runs from its
`tool_use` to its `tool_result`; a call that never got a result is closed by the end of its turn
(`turn_complete`), else it is still open. Which calls drove a browser is decided by name
(`is_browser_tool`), or by an activity entry naming the call's id (see links.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sidemirror.core.clock import parse_ts
from sidemirror.core.models import ActivityLink, ToolUseEvent
from sidemirror.core.store import SessionLog

LABEL_MAX_CHARS = 80

# MCP browser servers as agents name their tools: Claude Code `mcp__playwright__browser_click`,
# Codex `mcp__playwright__…` or `playwright__…`, Gemini CLI `mcp_playwright_…`, Chrome DevTools
# MCP, Claude in Chrome, and a bare `browser_*` tool (an ACP agent's title, or a server
# registered under another name).
_BROWSER_TOOL = re.compile(
    r"(?:^|_|[./:])(?:playwright|chrome[-_]?devtools|claude[-_]in[-_]chrome|puppeteer|"
    r"browser[-_]?mcp|browserbase|stagehand)(?:__|[./:_-])"
    r"|(?:^|_)browser_[a-z]",
    re.IGNORECASE,
)
# The tool name's server prefix and the `browser_` in `browser_click`: the verb is what is left.
_PREFIX = re.compile(r"^(?:mcp__[\w-]+?__|mcp_[a-z-]+_|[\w-]+?__)?(?:browser_)?", re.I)
# The input field that best names what a browser call acted on, in order of preference.
_TARGET_KEYS = ("ref", "uid", "url", "selector", "element", "key", "text", "function")


def is_browser_tool(name: str) -> bool:
    return bool(_BROWSER_TOOL.search(name))


def to_epoch(ts: str | None) -> float | None:
    """Seconds since the epoch; a time without a zone is taken as UTC (the sources' clock)."""
    when = parse_ts(ts)
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def iso(epoch: float) -> str:
    return (
        datetime.fromtimestamp(epoch, tz=UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def call_label(name: str, tool_input: str) -> str:
    """`mcp__playwright__browser_click` with `{"ref":"e5"}` → `click e5`."""
    verb = _PREFIX.sub("", name) or name
    target = ""
    try:
        value = json.loads(tool_input) if tool_input.lstrip().startswith("{") else None
    except ValueError:
        value = None
    if isinstance(value, dict):
        for key in _TARGET_KEYS:
            found = value.get(key)
            if isinstance(found, str | int) and str(found).strip():
                target = " ".join(str(found).split())
                break
    label = f"{verb} {target}".strip()
    return label if len(label) <= LABEL_MAX_CHARS else label[: LABEL_MAX_CHARS - 1] + "…"


@dataclass
class Call:
    """One tool call of a session and its time window (epoch seconds; `end` None while open)."""

    tool_use_id: str
    session: str
    agent: str
    item_id: str
    name: str
    kind: str
    label: str
    turn: int
    start: float
    end: float | None = None
    browser: bool = False

    _link: ActivityLink | None = field(default=None, repr=False, compare=False)
    _link_json: str = field(default="", repr=False, compare=False)

    def contains(self, when: float, now: float) -> bool:
        return self.start <= when <= (now if self.end is None else self.end)

    def link(self) -> ActivityLink:
        """What an entry this call caused says about it (made once: many entries share it)."""
        if self._link is None:
            self._link = ActivityLink(session=self.session, item_id=self.item_id,
                                      agent=self.agent, name=self.name, label=self.label,
                                      turn=self.turn)  # fmt: skip
        return self._link

    def link_json(self) -> str:
        if not self._link_json:
            self._link_json = self.link().model_dump_json()
        return self._link_json


@dataclass
class SessionCalls:
    """The calls of one session log, kept up to date by `update` (see the module docstring)."""

    session: str
    agent: str
    epoch: str = ""
    scanned: int = 0
    turn: int = 1
    calls: dict[str, Call] = field(default_factory=dict)
    open: dict[str, Call] = field(default_factory=dict)
    last_edit: Call | None = None

    def update(self, log: SessionLog) -> None:
        if log.epoch != self.epoch or len(log.items) < self.scanned:
            self._restart(log.epoch)  # the session was read again from its start
        items = log.items
        for index in range(self.scanned, len(items)):
            item = items[index]
            if isinstance(item, ToolUseEvent):
                self._started(item)
            elif item.type == "tool_result":
                call = self.open.pop(getattr(item, "tool_use_id", ""), None)
                when = to_epoch(item.ts)
                if call is not None and when is not None:
                    call.end = max(call.start, when)
            elif item.type == "turn_complete":
                when = to_epoch(item.ts)
                for call in self.open.values():
                    call.end = call.start if when is None else max(call.start, when)
                self.open.clear()
                self.turn += 1
        self.scanned = len(items)

    def _restart(self, epoch: str) -> None:
        self.epoch, self.scanned, self.turn, self.last_edit = epoch, 0, 1, None
        self.calls, self.open = {}, {}

    def _started(self, item: ToolUseEvent) -> None:
        start = to_epoch(item.ts)
        if start is None or item.tool_use_id in self.calls:
            return  # no time, no window; a repeated id (a replayed line) keeps the first
        call = Call(
            tool_use_id=item.tool_use_id,
            session=self.session,
            agent=self.agent,
            item_id=item.id,
            name=item.name,
            kind=item.kind,
            label=call_label(item.name, item.input),
            turn=self.turn,
            start=start,
            browser=is_browser_tool(item.name),
        )
        self.calls[call.tool_use_id] = call
        self.open[call.tool_use_id] = call
        if item.kind in ("edit", "write"):
            self.last_edit = call
