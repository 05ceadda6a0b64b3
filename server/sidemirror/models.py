"""The one definition of every public event (DESIGN §3).

Source adapters build these models (without `id`/`seq`, which the store assigns as positions in the
session's append-only log); the projection truncates them for the wire; `gen_protocol.py` writes
`extension/lib/protocol.gen.js` and `docs/protocol.md` from them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

PROTOCOL_VERSION = 1

ToolKind = Literal[
    "read", "edit", "write", "execute", "search", "fetch", "task", "plan", "ask", "mcp", "other"
]
CostSource = Literal["reported", "estimated", "unknown_model"]
TurnStatus = Literal["ok", "failed", "stopped"]
SessionState = Literal["running", "waiting", "idle", "ended"]


class _Event(BaseModel):
    """Fields every session item carries."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(
        default="", description="`<epoch>.<seq>`; the same string as the SSE `id:` line."
    )
    ts: str = Field(default="", description="ISO 8601 time the source recorded for this item.")
    seq: int = Field(default=0, description="1-based position of the item in its session log.")
    parent_tool_use_id: str | None = Field(
        default=None,
        description="Set on sub-agent (sidechain) items: the Task tool call they belong to.",
    )


class AssistantEvent(_Event):
    """Assistant text."""

    type: Literal["assistant"] = "assistant"
    content: str
    truncated: bool = False
    full_length: int = 0


class ToolUseEvent(_Event):
    """A tool call; `input` is a one-line human summary (command, path, pattern, URL...)."""

    type: Literal["tool_use"] = "tool_use"
    tool_use_id: str
    name: str
    kind: ToolKind = "other"
    input: str
    truncated_input: bool = False
    full_length: int = 0


class ToolResultEvent(_Event):
    """The result of a tool call, joined to its `tool_use` by `tool_use_id`."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    name: str = ""
    output: str
    truncated_output: bool = False
    full_length: int = 0
    is_error: bool = False
    duration_ms: int | None = None


class TurnCompleteEvent(_Event):
    """Emitted once per turn, when it closes."""

    type: Literal["turn_complete"] = "turn_complete"
    turn: int
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    cost_source: CostSource = "unknown_model"
    model: str | None = None
    duration_ms: int | None = None
    status: TurnStatus = "ok"


class UserEvent(_Event):
    """A real user prompt (not a tool result)."""

    type: Literal["user"] = "user"
    content: str
    truncated: bool = False
    full_length: int = 0


class ThinkingEvent(_Event):
    """Readable model reasoning; shown collapsed."""

    type: Literal["thinking"] = "thinking"
    content: str
    truncated: bool = False
    full_length: int = 0


class AssistantDeltaEvent(_Event):
    """Append-mode partial assistant text from sources that stream partials."""

    type: Literal["assistant_delta"] = "assistant_delta"
    segment_id: str
    text: str


class PlanEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str
    status: str = "pending"
    priority: str = "medium"


class PlanEvent(_Event):
    """The agent's to-do list (TodoWrite, ACP plan)."""

    type: Literal["plan"] = "plan"
    entries: list[PlanEntry]


class SystemEvent(_Event):
    """Compaction, API errors and record types the adapter does not know."""

    type: Literal["system"] = "system"
    subtype: str
    content: str
    truncated: bool = False
    full_length: int = 0


class ErrorEvent(_Event):
    """An error the agent or source reported."""

    type: Literal["error"] = "error"
    message: str


SessionItem = Annotated[
    AssistantEvent
    | ToolUseEvent
    | ToolResultEvent
    | TurnCompleteEvent
    | UserEvent
    | ThinkingEvent
    | AssistantDeltaEvent
    | PlanEvent
    | SystemEvent
    | ErrorEvent,
    Field(discriminator="type"),
]
SESSION_ITEM_ADAPTER: TypeAdapter[SessionItem] = TypeAdapter(SessionItem)

# The field that truncation applies to, and the flag that says it happened, per item type.
TRUNCATED_FIELDS: dict[str, tuple[str, str]] = {
    "assistant": ("content", "truncated"),
    "user": ("content", "truncated"),
    "thinking": ("content", "truncated"),
    "system": ("content", "truncated"),
    "tool_use": ("input", "truncated_input"),
    "tool_result": ("output", "truncated_output"),
}


# --- Stream control messages (no `id:` line, except `snapshot`, whose id is its cursor) ---


class _Control(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HelloMessage(_Control):
    """First message of every session stream."""

    type: Literal["hello"] = "hello"
    protocol: int = PROTOCOL_VERSION
    epoch: str
    workspace: str
    session: str
    version: str


class SnapshotMessage(_Control):
    """The latest N items; live items follow from `cursor`."""

    type: Literal["snapshot"] = "snapshot"
    items: list[SessionItem]
    total: int
    cursor: str | None
    epoch: str
    session: str


class ResetMessage(_Control):
    """The client's Last-Event-ID cannot be resumed; a snapshot follows."""

    type: Literal["reset"] = "reset"
    reason: str
    epoch: str


class SessionStatusMessage(_Control):
    """The session's state changed, or the followed workspace switched session."""

    type: Literal["session_status"] = "session_status"
    state: SessionState
    session: str


class ActivityEntry(BaseModel):
    """A browse action or observation (DESIGN §5), as stored and streamed."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    seq: int = 0
    type: Literal["command_start", "command_end", "navigation", "console", "error"] = "command_end"
    request_id: str | None = None
    start_id: str | None = None
    command: str = ""
    args: list[str] = Field(default_factory=list)
    url: str | None = None
    tab_id: int | str | None = None
    workspace: str | None = None
    status: Literal["ok", "error"] | None = None
    duration_ms: int | None = None
    result: str | None = None
    truncated: bool = False
    error: str | None = None
    refs: list[dict[str, str]] = Field(default_factory=list)
    ts: str = ""


class GapMessage(_Control):
    """Activity older than the client's cursor fell out of the ring."""

    type: Literal["gap"] = "gap"
    missed: int


CONTROL_MESSAGES: tuple[type[BaseModel], ...] = (
    HelloMessage,
    SnapshotMessage,
    ResetMessage,
    SessionStatusMessage,
    GapMessage,
)
ITEM_MODELS: tuple[type[_Event], ...] = (
    AssistantEvent,
    ToolUseEvent,
    ToolResultEvent,
    TurnCompleteEvent,
    UserEvent,
    ThinkingEvent,
    AssistantDeltaEvent,
    PlanEvent,
    SystemEvent,
    ErrorEvent,
)
