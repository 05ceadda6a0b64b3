"""What a browser showed, in the words a developer (or an agent) asks with.

`kind_of` sorts an activity entry into `console` (console errors, page exceptions, browser log
errors), `network` (failed requests), `navigation`, `dialog`, or `command` (what the agent did);
`summarize` makes the one-line summary a tool card shows ("→ /dashboard · 2 console errors ·
1 failed request"); `since_time` answers "since when" for `sidemirror_browser_events`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal
from urllib.parse import urlsplit

from sidemirror.activity.calls import SessionCalls, to_epoch
from sidemirror.activity.links import WorkspaceCalls
from sidemirror.core.models import ActivityEntry

BrowserEventKind = Literal["console", "network", "navigation", "dialog", "command"]
OBSERVED_KINDS: tuple[BrowserEventKind, ...] = ("console", "network", "navigation", "dialog")


def kind_of(entry: ActivityEntry) -> BrowserEventKind:
    if entry.command == "dialog":
        return "dialog"
    if entry.command.startswith("request."):
        return "network"
    if entry.type == "navigation":
        return "navigation"
    if entry.type in ("console", "error"):
        return "console"
    return "command"


def _where(url: str | None) -> str | None:
    """The part of a URL a person recognises: the path (and query), or the URL if it has none."""
    if not url:
        return None
    parts = urlsplit(url)
    if not parts.scheme.startswith("http"):
        return url
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def summarize(entries: Sequence[ActivityEntry]) -> dict[str, object]:
    """Counts of what the linked entries show, and where the page ended up."""
    counts = {"navigations": 0, "console_errors": 0, "page_errors": 0, "failed_requests": 0,
              "dialogs": 0, "commands": 0}  # fmt: skip
    url: str | None = None
    for entry in entries:
        kind = kind_of(entry)
        if kind == "navigation":
            counts["navigations"] += 1
            if entry.command != "tab.close":
                url = entry.url or url
        elif kind == "console":
            counts["page_errors" if entry.type == "error" else "console_errors"] += 1
        elif kind == "network":
            counts["failed_requests"] += 1
        elif kind == "dialog":
            counts["dialogs"] += 1
        else:
            counts["commands"] += 1
    errors = counts["console_errors"] + counts["page_errors"] + counts["failed_requests"]
    return {"url": url, "where": _where(url), **counts, "errors": errors}


def since_time(
    since: str, session: SessionCalls, others: WorkspaceCalls | None
) -> tuple[float, str | None, str]:
    """(epoch seconds, the tool call id it names if any, what it meant) for `since`: `last_edit`
    (the latest Edit/Write call of `session`), a tool call id (of `session`, else of `others`,
    the workspace's calls when the caller read them), or an ISO 8601 time. Raises ValueError
    with what was expected."""
    if since == "last_edit":
        edit = session.last_edit
        if edit is None:
            raise ValueError(f"no edit or write tool call in session {session.session!r} yet")
        return edit.start, edit.tool_use_id, f"last edit: {edit.label} (turn {edit.turn})"
    call = session.calls.get(since) or (others.by_id.get(since) if others else None)
    if call is not None:
        return call.start, call.tool_use_id, f"tool call: {call.label} (turn {call.turn})"
    when = to_epoch(since)
    if when is None:
        raise ValueError(
            f"'since' must be a tool call id of this workspace, 'last_edit' or an ISO 8601 time; "
            f"got {since[:80]!r}"
        )
    return when, None, f"time {since}"
