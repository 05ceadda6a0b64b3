"""The `sidemirror_*` MCP tools: definitions (schemas from `mcp_schemas`) and what they do.

Tools read the same store and activity log as the HTTP API and return the same shapes, so an
agent asking over MCP sees exactly what the side panel shows (redacted, truncated).
A `ToolError` is a failure the caller can act on (unknown workspace...): it becomes an
`isError: true` result, not a JSON-RPC error, so the model sees the message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

from aiohttp import web
from pydantic import BaseModel

from sidemirror.activity.browser_events import kind_of, since_time
from sidemirror.activity.calls import iso, to_epoch
from sidemirror.activity.log import RING_SIZE
from sidemirror.core.store import Workspace, resolve_workspace
from sidemirror.core.views import snapshot_head, workspace_summary
from sidemirror.mcp.schemas import (
    BrowserEventsInput,
    BrowserEventsOutput,
    GetActivityInput,
    GetActivityOutput,
    GetSessionInput,
    GetSessionOutput,
    ListWorkspacesInput,
    ListWorkspacesOutput,
    ReportBrowserActionInput,
    ReportBrowserActionOutput,
    clean_schema,
)
from sidemirror.mcp.workspace_lookup import WorkspaceLookupError, find_workspace
from sidemirror.web.browser_links import BROWSER_LINKS
from sidemirror.web.state import APP_STATE

In = TypeVar("In", bound=BaseModel)


class ToolError(Exception):
    """A tool could not do what was asked; the message is shown to the model."""


@dataclass(frozen=True)
class Tool(Generic[In]):
    name: str
    title: str
    description: str
    input_model: type[In]
    output_model: type[BaseModel]
    run: Callable[[web.Application, In], Awaitable[dict[str, Any]]]
    read_only: bool = True

    @cached_property
    def definition(self) -> dict[str, Any]:
        """Computed once, when a client first lists the tools (not at import: generating the
        schemas is a tenth of the server's start-up), since schemas never change."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": clean_schema(self.input_model, "validation"),
            "outputSchema": clean_schema(self.output_model, "serialization"),
            "annotations": {
                "title": self.title,
                "readOnlyHint": self.read_only,
                "destructiveHint": False,
                "idempotentHint": self.read_only,
                # Only this server's own data is touched, never the outside world.
                "openWorldHint": False,
            },
        }


def _find_workspace(app: web.Application, value: str) -> Workspace:
    try:
        return find_workspace(app[APP_STATE].store, value)
    except WorkspaceLookupError as exc:
        raise ToolError(str(exc)) from None


async def list_workspaces(app: web.Application, _: ListWorkspacesInput) -> dict[str, Any]:
    store = app[APP_STATE].store
    return {"workspaces": [workspace_summary(ws) for ws in store.workspaces_by_activity()]}


async def get_session(app: web.Application, args: GetSessionInput) -> dict[str, Any]:
    store = app[APP_STATE].store
    ws = _find_workspace(app, args.workspace)
    log = ws.latest_session() if args.session is None else ws.sessions.get(args.session)
    if log is None:
        if args.session is None:
            raise ToolError(f"workspace {ws.id} ({ws.directory}) has no sessions yet")
        known = ", ".join(sorted(ws.sessions)[:20]) or "none"
        raise ToolError(f"unknown session {args.session!r} in workspace {ws.id}; known: {known}")
    await store.load(log)
    wanted = set(args.types) if args.types else None
    if wanted is None:  # the common case reads only the newest items (older ones are on disk)
        picked, matched = log.items.newest(args.limit), len(log.items)
    else:
        picked = [item for item in log.items if item.type in wanted]
        matched = len(picked)
    return {
        **snapshot_head(log),
        "agent": log.agent,
        "title": log.title,
        "state": log.state,
        "reason": log.state_reason,
        "exact": log.state_exact,
        "matched": matched,
        # Same projection as the SSE stream and snapshots: truncated text, full_length kept.
        "items": [store.projector.to_dict(item) for item in picked[-args.limit :]],
    }


async def report_browser_action(
    app: web.Application, args: ReportBrowserActionInput
) -> dict[str, Any]:
    # exclude_unset: the log applies its own defaults (type, ts) exactly as for POST /api/activity.
    raw = args.model_dump(mode="json", exclude_unset=True)
    raw["source"] = "mcp"  # set by the server, so the feed can tell MCP reports apart
    try:
        entry = app[APP_STATE].activity.report(raw)
    except ValueError as exc:
        raise ToolError(f"activity entry refused: {exc}") from None
    return {"entry": entry.model_dump(mode="json")}


async def get_activity(app: web.Application, args: GetActivityInput) -> dict[str, Any]:
    ws_id = None if args.workspace is None else resolve_workspace(args.workspace).id
    entries = app[APP_STATE].activity.entries(ws_id, args.limit)
    return {"workspace": ws_id, "entries": [e.model_dump(mode="json") for e in entries]}


async def browser_events(app: web.Application, args: BrowserEventsInput) -> dict[str, Any]:
    activity = app[APP_STATE].activity
    if args.workspace is None:
        latest = activity.latest_workspace()
        if latest is None:
            raise ToolError("no agent has acted in a browser yet; pass `workspace`")
        ws = _find_workspace(app, latest[0])
    else:
        ws = _find_workspace(app, args.workspace)
    log = ws.latest_session() if args.session is None else ws.sessions.get(args.session)
    if log is None:
        known = ", ".join(sorted(ws.sessions)[:20]) or "none"
        raise ToolError(f"no session {args.session!r} in workspace {ws.id}; known: {known}")
    links = app[BROWSER_LINKS]
    held = activity.entries(ws.id, RING_SIZE)
    session = await links.session_calls(ws, log)
    # A call id of another session of the workspace: only then are the others read.
    others = None
    named_elsewhere = args.since not in ("last_edit", *session.calls)
    if named_elsewhere and to_epoch(args.since) is None:
        others = await links.workspace_calls(ws)
    try:
        start, call_id, meaning = since_time(args.since, session, others)
    except ValueError as exc:
        raise ToolError(str(exc)) from None
    wanted = set(args.kinds)
    picked = [e for e in held if kind_of(e) in wanted and (to_epoch(e.ts) or 0.0) >= start]
    events = await links.annotate(picked[-args.limit :])
    return {
        "workspace": ws.id,
        "since": {"ts": iso(start), "tool_use_id": call_id, "meaning": meaning},
        "matched": len(picked),
        "events": [e.model_dump(mode="json") for e in events],
    }


TOOLS: dict[str, Tool[Any]] = {
    tool.name: tool
    for tool in (
        Tool(
            "sidemirror_list_workspaces",
            "List mirrored workspaces",
            "Workspaces (project directories) whose coding-agent sessions Sidemirror mirrors, "
            "newest activity first, with their ids, agent, branch and whether an agent is active.",
            ListWorkspacesInput,
            ListWorkspacesOutput,
            list_workspaces,
        ),
        Tool(
            "sidemirror_get_session",
            "Read a session",
            "Recent items of a coding-agent session (user prompts, assistant text, tool calls and "
            "results, turn summaries), oldest first, long text truncated and secrets redacted. "
            "Filter with `types`; the latest session of the workspace if `session` is omitted.",
            GetSessionInput,
            GetSessionOutput,
            get_session,
        ),
        Tool(
            "sidemirror_report_browser_action",
            "Report a browser action",
            "Record something you did in a browser (navigate, click, fill, snapshot...) in the "
            "user's Sidemirror activity feed, so they can follow along. Only `command` is "
            "required. Typed values are redacted by the server.",
            ReportBrowserActionInput,
            ReportBrowserActionOutput,
            report_browser_action,
            read_only=False,
        ),
        Tool(
            "sidemirror_get_activity",
            "Read browser activity",
            "Recent browser activity entries (commands, navigations, console errors), oldest "
            "first, for one workspace or all.",
            GetActivityInput,
            GetActivityOutput,
            get_activity,
        ),
        Tool(
            "sidemirror_browser_events",
            "What happened in the browser since…",
            "Console errors, page exceptions, failed requests, navigations and dialogs the "
            'user\'s browser showed since your last Edit/Write (`since: "last_edit"`, the '
            "default), since one of your tool calls (its id), or since a time; each names the "
            "tool call that caused it. Secrets redacted, newest `limit` returned.",
            BrowserEventsInput,
            BrowserEventsOutput,
            browser_events,
        ),
    )
}
