"""The walk every format shares: a session read from the server oldest item first, in bounded
memory, each item with what a reader needs to place it.

`before=` pages run newest to oldest, an export oldest to newest. So a first pass pages back
keeping only each page's first id (where the next page back starts), the totals for the header
and where rewinds abandoned a branch (a rewind line comes after the items it abandons); the
second pass fetches the pages again, oldest first, and hands items to the writer one at a time.
Memory holds one page, the page ids and the ranges, never the session."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from sidemirror.export.api import ExportError, Located

PAGE = 500  # items per request: well under the server's 10000, a few hundred KB of JSON

# Each text item's long field and the flag that says the server cut it (docs/protocol.md).
CUT_FLAGS = {"truncated": "content", "truncated_input": "input", "truncated_output": "output"}
TOKEN_FIELDS = {
    "input": ("input_tokens",),
    "output": ("output_tokens",),
    "cache": ("cache_read_tokens", "cache_write_tokens"),
}
WHOLE_ALWAYS = ("user", "assistant")  # what was said is never cut; --max-chars cuts the rest


@dataclass
class Header:
    """What an export says before its first item: the session and its totals."""

    title: str
    session_id: str
    workspace: str
    directory: str
    agent: str
    started_at: str | None
    last_activity: str | None
    items: int = 0
    prompts: int = 0
    turns: int = 0
    # The turns' tokens by kind: `input`, `output`, `cache` (read and write together)
    tokens: Counter[str] = field(default_factory=Counter)
    cost_usd: float | None = None


@dataclass
class Shown:
    item: dict[str, Any]  # as the server answered it, whole unless the writer cuts it
    depth: int  # 0 for the main thread, 1 for a sub-agent's item, 2 for a sub-agent's own…
    abandoned: bool  # on a branch the user rewound past
    # On a turn_complete: the agent's own duration of the turn, from a later `turn_duration`
    # (a reading shows it in place of the wall time; the JSONL export keeps the items as sent).
    measured_ms: int | None = None


class SessionPages(Protocol):
    """Where a walk reads its session: over HTTP for the CLI (export/api.py), from the store
    for the server's own export route (export/store_pages.py). Both answer as the routes do."""

    def page(self, before: str | None, limit: int) -> dict[str, Any]:
        """`GET …/session`: the newest `limit` items, or those before `before`, with
        `has_more`."""
        ...

    def whole(self, item_id: str) -> dict[str, Any]:
        """`GET …/session/items/{id}`: one item, whole."""
        ...


class Writer(Protocol):
    def header(self, header: Header) -> None: ...
    def item(self, shown: Shown) -> None: ...
    def close(self) -> None: ...


@dataclass
class Survey:
    """What the first pass keeps."""

    befores: list[str] = field(default_factory=list)  # newest page's first id, then older ones'
    newest: list[dict[str, Any]] = field(default_factory=list)  # the snapshot page, kept
    abandoned: list[tuple[int, int]] = field(default_factory=list)  # (after, below) seqs
    # A turn's seq -> the agent's own duration of it (a `turn_duration` comes after its turn)
    durations: dict[int, int] = field(default_factory=dict)


class SessionWalk:
    def __init__(self, pages: SessionPages, located: Located, page: int = PAGE) -> None:
        self.pages = pages
        self.sid = located.session["id"]
        self.page = page
        self.header = Header(
            title=" ".join((located.session.get("title") or self.sid).split()),  # one line
            session_id=self.sid,
            workspace=located.workspace.get("name") or located.workspace["id"],
            directory=located.workspace.get("directory") or "",
            agent=located.session.get("agent") or located.workspace.get("agent") or "",
            started_at=located.session.get("started_at"),
            last_activity=located.session.get("last_activity"),
        )
        self.survey = Survey()

    def _page(self, before: str | None) -> dict[str, Any]:
        return self.pages.page(before, self.page)

    def _count(self, items: list[dict[str, Any]]) -> None:
        h = self.header
        h.items += len(items)
        for item in items:
            kind = item.get("type")
            if kind == "system" and item.get("abandoned_after") is not None:
                self.survey.abandoned.append((item["abandoned_after"], item["seq"]))
            if kind == "turn_duration":
                self.survey.durations[item["turn_seq"]] = item["duration_ms"]
            if item.get("parent_tool_use_id") is not None:
                continue  # a sub-agent's turns are counted in its parent's turn
            if kind == "user":
                h.prompts += 1
            elif kind == "turn_complete":
                h.turns += 1
                for kind, fields in TOKEN_FIELDS.items():
                    h.tokens[kind] += sum(item.get(f) or 0 for f in fields)
                if item.get("cost_usd") is not None:
                    h.cost_usd = (h.cost_usd or 0.0) + float(item["cost_usd"])

    def first_pass(self) -> Header:
        snap = self._page(None)
        self.survey.newest = list(snap["items"])
        self._count(self.survey.newest)
        first = self.survey.newest[0]["id"] if self.survey.newest else None
        while first is not None:
            page = self._page(first)
            if not page["items"]:
                break
            self.survey.befores.append(first)
            self._count(page["items"])
            first = page["items"][0]["id"] if page.get("has_more") else None
        return self.header

    def _pages(self) -> Iterator[list[dict[str, Any]]]:
        for before in reversed(self.survey.befores):
            yield self._page(before)["items"]
        yield self.survey.newest

    def _whole(self, item: dict[str, Any]) -> dict[str, Any]:
        whole = self.pages.whole(item["id"])
        if whole.get("id") != item["id"]:
            raise ExportError(f"the server answered another item for {item['id']}")
        return whole

    def items(self, max_chars: int | None) -> Iterator[Shown]:
        """Every item oldest first, whole where the server cut it, unless what it sent already
        holds the `max_chars` the writer shows."""
        depth_of: dict[str, int] = {}  # a sub-agent's tool calls: the depth of their items
        for items in self._pages():
            for item in items:
                if needs_whole(item, max_chars):
                    item = self._whole(item)
                parent = item.get("parent_tool_use_id")
                depth = 0 if parent is None else depth_of.get(parent, 0) + 1
                if depth and item.get("type") == "tool_use":
                    depth_of[item["tool_use_id"]] = depth
                seq = item.get("seq", 0)
                abandoned = any(a < seq < b for a, b in self.survey.abandoned)
                measured = (
                    self.survey.durations.get(seq) if item["type"] == "turn_complete" else None
                )
                yield Shown(item, depth, abandoned, measured)


def needs_whole(item: dict[str, Any], max_chars: int | None) -> bool:
    """Whether the server cut text the export shows: prompts and replies are always shown
    whole, other text (tool calls, results, thinking) up to `max_chars`."""
    if item.get("type") in WHOLE_ALWAYS:
        max_chars = None
    diff = item.get("diff")
    if isinstance(diff, dict) and diff.get("truncated"):
        return True
    for flag, text in CUT_FLAGS.items():
        if item.get(flag) and (max_chars is None or len(item.get(text) or "") <= max_chars):
            return True
    return False


def export(walk: SessionWalk, writer: Writer, max_chars: int | None) -> None:
    writer.header(walk.first_pass())
    for shown in walk.items(max_chars):
        writer.item(shown)
    writer.close()
