"""Inputs and outputs of the MCP tools, defined once as pydantic models.

The JSON Schemas that `tools/list` advertises are generated from these models, and the same
models validate `tools/call` arguments, so what a client is told and what the server enforces
cannot drift apart. Inputs are strict (no "5" for 5) because a JSON Schema says `integer`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sidemirror.activity.browser_events import OBSERVED_KINDS, BrowserEventKind
from sidemirror.core.models import ActivityEntry, SessionItem

# The session item types a `types` filter may name; tests check this matches models.ITEM_MODELS.
ItemType = Literal[
    "assistant",
    "tool_use",
    "tool_result",
    "turn_complete",
    "turn_duration",
    "user",
    "thinking",
    "assistant_delta",
    "thinking_delta",
    "tool_progress",
    "plan",
    "system",
    "error",
]

WORKSPACE_HELP = (
    "Workspace id (12 hex digits, from sidemirror_list_workspaces), the workspace directory "
    "as the agent records it (its cwd), or its name (the directory's last part, e.g. `app`)."
)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ListWorkspacesInput(_Input):
    """No arguments."""


class GetSessionInput(_Input):
    workspace: str = Field(min_length=1, description=WORKSPACE_HELP)
    session: str | None = Field(
        default=None, description="Session id; the workspace's latest session if omitted."
    )
    limit: int = Field(default=50, ge=1, le=500, description="How many recent items to return.")
    types: list[ItemType] | None = Field(
        default=None,
        min_length=1,
        description='Only items of these types (e.g. ["user", "assistant"]).',
    )


class BrowserRef(_Input):
    ref: str = Field(description="Element reference the browser tool used (e.g. `e12`).")
    role: str | None = None
    name: str | None = None
    selector: str | None = None


class ReportBrowserActionInput(_Input):
    """The fields of an activity entry; the server assigns `id` and redacts."""

    command: str = Field(
        min_length=1, description="The browser command, e.g. `goto`, `click`, `fill`, `snapshot`."
    )
    type: Literal["command_start", "command_end", "navigation", "console", "error"] = Field(
        default="command_end",
        description="`command_end` (default) for a finished action; `command_start` before a "
        "long one (the matching end repeats its `request_id`).",
    )
    request_id: str | None = Field(
        default=None, description="Joins a command_start to its command_end."
    )
    args: list[str] = Field(
        default_factory=list,
        description="Arguments, target first. Values typed into fields are redacted.",
    )
    url: str | None = Field(default=None, description="The page URL.")
    tab_id: int | str | None = None
    workspace: str | None = Field(default=None, description=WORKSPACE_HELP)
    status: Literal["ok", "error"] | None = None
    duration_ms: int | None = Field(default=None, ge=0)
    result: str | None = Field(default=None, description="Short result; truncated to 500 chars.")
    error: str | None = None
    refs: list[BrowserRef] = Field(default_factory=list)
    ts: str | None = Field(default=None, description="ISO 8601 time; now if omitted.")
    tool_use_id: str | None = Field(
        default=None,
        description="Your tool call's id (e.g. `toolu_…`), to link this entry to that call in "
        "the user's session view.",
    )


class GetActivityInput(_Input):
    workspace: str | None = Field(
        default=None, description=WORKSPACE_HELP + " All workspaces if omitted."
    )
    limit: int = Field(default=50, ge=1, le=1000, description="How many recent entries.")


def _observed_kinds() -> list[BrowserEventKind]:
    return list(OBSERVED_KINDS)


class BrowserEventsInput(_Input):
    workspace: str | None = Field(
        default=None,
        description=WORKSPACE_HELP + " The workspace whose agent acted in the browser last if "
        "omitted.",
    )
    since: str = Field(
        default="last_edit",
        min_length=1,
        description="`last_edit` (the session's latest Edit/Write tool call), a tool call id "
        "(`toolu_…`: everything from that call on), or an ISO 8601 time.",
    )
    session: str | None = Field(
        default=None,
        description="The session whose last edit (and tool calls) `since` names; the "
        "workspace's latest session if omitted.",
    )
    kinds: list[BrowserEventKind] = Field(
        default_factory=_observed_kinds,
        min_length=1,
        description="Which events: `console` (console errors, page exceptions), `network` "
        "(failed requests), `navigation`, `dialog`, `command` (browser actions reported).",
    )
    limit: int = Field(default=50, ge=1, le=200, description="At most this many, the newest.")


# --- outputs (structuredContent) ---


class HostOut(BaseModel):
    label: str
    connected: bool = Field(description="A `sidemirror forward` is connected under this label.")
    since: str | None = Field(description="When it connected, or when it was last heard from.")


class WorkspaceOut(BaseModel):
    id: str
    name: str
    branch: str | None
    directory: str
    pid: int | None
    active: bool
    agent: str
    last_activity: str | None
    sessions: int
    host: HostOut | None = Field(description="null on this machine; else the forwarded host.")


class ListWorkspacesOutput(BaseModel):
    workspaces: list[WorkspaceOut] = Field(description="Newest activity first.")


class GetSessionOutput(BaseModel):
    workspace: str
    session: str
    agent: str
    title: str | None
    state: str = Field(description="`running`, `waiting`, `idle` or `ended` (docs/api.md).")
    reason: str | None = Field(None, description="Why it waits or ended, else null.")
    exact: bool = Field(
        False,
        description="True when a hook or the agent's protocol said the state; false when it "
        "was inferred from files, processes and time.",
    )
    epoch: str
    cursor: str | None = Field(description="Id of the session's last item.")
    total: int = Field(description="Items the server holds for the session.")
    skipped_bytes: int = Field(
        0,
        description="Bytes of a huge transcript before the first item held (not read); 0 "
        "when the session is held from its start.",
    )
    matched: int = Field(description="Items that pass the `types` filter.")
    items: list[SessionItem] = Field(description="Oldest first; long text truncated.")


class ReportBrowserActionOutput(BaseModel):
    entry: ActivityEntry


class GetActivityOutput(BaseModel):
    workspace: str | None = Field(description="The workspace id asked for, or null for all.")
    entries: list[ActivityEntry] = Field(description="Oldest first.")


class BrowserEventsSince(BaseModel):
    ts: str = Field(description="The time events are returned from (ISO 8601).")
    tool_use_id: str | None = Field(description="The tool call `since` named or resolved to.")
    meaning: str = Field(description="What `since` was taken to mean, e.g. `last edit: Edit …`.")


class BrowserEventsOutput(BaseModel):
    workspace: str
    since: BrowserEventsSince
    matched: int = Field(description="Events after `since` of the kinds asked for.")
    events: list[ActivityEntry] = Field(
        description="Oldest first, the newest `limit` of them; each names the tool call that "
        "caused it (`tool_use_id`, `link`) when one did. Secrets redacted, text truncated."
    )


def clean_schema(model: type[BaseModel], mode: Literal["validation", "serialization"]) -> Any:
    """The model's JSON Schema without pydantic's auto-generated `title`s (noise for clients)."""
    return _strip_titles(model.model_json_schema(mode=mode))


def _strip_titles(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs"):
            # Keys here are names (a property may be called "title"), values are schemas.
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out
