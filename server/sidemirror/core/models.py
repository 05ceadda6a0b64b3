"""The one definition of every public event.

Source adapters build these models (without `id`/`seq`, which the store assigns as positions in the
session's append-only log); the projection truncates them for the wire; `gen_protocol.py` writes
`extension/lib/shared/protocol.gen.js` and `docs/protocol.md` from them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from sidemirror import PROTOCOL_VERSION

ToolKind = Literal[
    "read", "edit", "write", "execute", "search", "fetch", "task", "plan", "ask", "mcp", "other"
]
CostSource = Literal["reported", "estimated", "unknown_model"]
TurnStatus = Literal["ok", "failed", "stopped"]
SessionState = Literal["running", "waiting", "idle", "ended"]


def _absent_unless_set(description: str) -> Any:
    """An optional field left out of the wire form (not null) unless set, so items without it
    keep their exact wire form (and their ids' digests)."""
    return Field(default=None, exclude_if=lambda v: v is None, description=description)


class _Event(BaseModel):
    """Fields every session item carries."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(
        default="", description="`<epoch>.<seq>`; the same string as the SSE `id:` line."
    )
    ts: str = Field(default="", description="ISO 8601 time the source recorded for this item.")
    seq: int = Field(
        default=0,
        description=(
            "The item's position in its session log: increases along the log, not dense "
            "(a transcript's seqs come from byte positions in its file)."
        ),
    )
    parent_tool_use_id: str | None = Field(
        default=None,
        description="Set on sub-agent (sidechain) items: the Task tool call they belong to. "
        "`unplaced:<thread>` on a Claude Code sub-agent's items that no Task call claims: they "
        "nest under a `tool_use` with that id named `Unplaced sub-agent`, never dropped.",
    )
    # Absent (not null) unless set, so items from ordinary lines keep their exact wire form.
    line_bytes: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description=(
            "Present only on an item read from a source line over the 8 MiB cap: that line's "
            "size in bytes. The item keeps the head of its text (`truncated` true, `full_length` "
            "the whole text's length), and so does `GET .../items/{id}`."
        ),
    )


class Attachment(BaseModel):
    """An image (or audio clip) a message carried, shown as a chip: the data is never kept."""

    model_config = ConfigDict(extra="forbid")

    media_type: str = Field(description="MIME type as the source gave it, e.g. `image/png`.")
    size: int | None = Field(
        default=None, description="Decoded size in bytes; null when only a URI was given."
    )


class AssistantEvent(_Event):
    """Assistant text."""

    type: Literal["assistant"] = "assistant"
    content: str
    truncated: bool = False
    full_length: int = 0
    segment_id: str | None = Field(
        default=None,
        description="Set when this text was first streamed as `assistant_delta` events with the "
        "same `segment_id`: the panel replaces those partial segments with this item.",
    )
    # Absent unless set, so plain replies keep their exact wire form.
    attachments: list[Attachment] = Field(
        default_factory=list,
        exclude_if=lambda v: not v,
        description="Present only when the reply carried images (or audio), apart from its "
        "text: each as media type and size, shown as a chip; the data is never kept.",
    )


class DiffHunk(BaseModel):
    """One unified-diff hunk: where it sits in the old and new text (1-based, as `diff -u`
    numbers them) and its lines, each starting with `+`, `-` or a space."""

    model_config = ConfigDict(extra="forbid")

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str]


class FileDiff(BaseModel):
    """What an edit changed in one file, computed by the server from the tool call's input."""

    model_config = ConfigDict(extra="forbid")

    path: str
    added: int = Field(description="Lines added, counted over the whole change.")
    removed: int = Field(description="Lines removed, counted over the whole change.")
    hunks: list[DiffHunk] = Field(
        description="Line numbers count from the edited text itself where the agent gave only "
        "the text it replaced (Edit, MultiEdit, apply_patch), from the file where it gave the "
        "whole file (ACP diffs)."
    )
    truncated: bool = Field(
        default=False,
        description="Lines were left out or cut (as other fields are cut to `--max-chars`); "
        "`GET .../items/{id}` gives the hunks whole.",
    )


class ToolUseEvent(_Event):
    """A tool call; `input` is a one-line human summary (command, path, pattern, URL...)."""

    type: Literal["tool_use"] = "tool_use"
    tool_use_id: str
    name: str
    kind: ToolKind = "other"
    input: str
    truncated_input: bool = False
    full_length: int = 0
    diff: FileDiff | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present on an edit or write (Edit, MultiEdit, Write, NotebookEdit, "
        "apply_patch, an ACP diff): what it changed, as unified hunks (redacted).",
    )
    diffs: list[FileDiff] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present only on a call that changed several files (a Codex apply_patch "
        "of more than one file): every file's change, in the patch's order; `diff` is the "
        "first of them.",
    )


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
    attachments: list[Attachment] = Field(
        default_factory=list, description="Images the tool returned, apart from its text."
    )
    denial: str | None = _absent_unless_set(
        "Present only when the call was refused before it ran: why, as the agent said (e.g. "
        "`Denied by rule Bash(rm:*)`), shown on the tool's card; its `output` is what the "
        "agent told the model."
    )


class TurnCompleteEvent(_Event):
    """Emitted once per turn, when it closes."""

    type: Literal["turn_complete"] = "turn_complete"
    # 1-based; null when the session's start was not read (a huge transcript is read from
    # near its end, so the turns before are not counted: sources/claude/sync.py).
    turn: int | None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    cost_source: CostSource = "unknown_model"
    model: str | None = None
    duration_ms: int | None = Field(
        default=None,
        description="How long the turn took: as the agent reported it, else the time from its "
        "prompt to its last item. A later `turn_duration` item naming this turn's `seq` "
        "replaces it with the agent's own figure.",
    )
    status: TurnStatus = "ok"
    stop_reason: str | None = Field(
        default=None,
        description="Why the turn ended, in the agent's words when it gives one (`end_turn`, "
        "`cancelled`, `max_tokens`, `refusal`, `interrupted`, an error kind…).",
    )
    context_tokens: int | None = Field(
        default=None,
        description="Tokens in the model's context at the turn's last request (input, cache read "
        "and cache write of its last main-thread request; an ACP agent's `usage_update.used`; "
        "Codex's last `token_count` input); null when unknown.",
    )
    context_window: int | None = Field(
        default=None,
        description="The model's context window in tokens: the source's own figure where it "
        "reports one (ACP `usage_update.size`, `claude -p`'s `modelUsage`, Codex's "
        "`model_context_window`), else the dated price table's; null when neither knows it.",
    )
    subagent_tokens: int | None = _absent_unless_set(
        "Present only when sub-agents (Task calls) ran in the turn: the part of "
        "the turn's tokens (input, output, cache read and write) that was theirs. The turn's "
        "own token fields and `cost_usd` already include it.",
    )
    subagent_cost_usd: float | None = _absent_unless_set(
        "With `subagent_tokens`: the part of `cost_usd` that was the sub-agents'; "
        "absent when their model has no price.",
    )


class TurnDurationEvent(_Event):
    """The agent's own measure of a turn already closed: its `turn_complete` (the item whose
    seq is `turn_seq`) takes this `duration_ms` in place of its own. Claude Code writes it
    (a `system`/`turn_duration` record) seconds after the turn's `end_turn`, which closes the
    turn at once, and leaves out time spent waiting (a permission prompt). Items are never
    rewritten once published, so the figure comes as an item of its own; it is shown on its
    turn, never as a row."""

    type: Literal["turn_duration"] = "turn_duration"
    turn_seq: int = Field(description="The seq of the `turn_complete` it measures.")
    duration_ms: int = Field(ge=0, description="The turn's duration, as the agent measured it.")


class UserEvent(_Event):
    """A real user prompt (not a tool result)."""

    type: Literal["user"] = "user"
    content: str
    truncated: bool = False
    full_length: int = 0
    attachments: list[Attachment] = Field(
        default_factory=list,
        description="Images (or audio) sent with the prompt, apart from its text.",
    )
    # Absent (not null) on what the user typed, so those keep their exact wire form.
    task_prompt_tool: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present only on a sub-agent's prompt (the message its parent's tool call "
        "gave it, `parent_tool_use_id` set): that tool's name, e.g. `Task` or `Agent`. The "
        "panel labels it as a task prompt, not as the user's.",
    )
    queued: bool | None = _absent_unless_set(
        "Present (true) only on a message the user typed while the agent worked: "
        "the agent queued it and the model read it at this point, mid-turn or as the next "
        "prompt. The panel marks it as sent while the agent worked.",
    )


class ThinkingEvent(_Event):
    """Readable model reasoning; shown collapsed."""

    type: Literal["thinking"] = "thinking"
    content: str
    truncated: bool = False
    full_length: int = 0
    segment_id: str | None = Field(
        default=None,
        description="Set when this reasoning was first streamed as `thinking_delta` events with "
        "the same `segment_id`: the panel replaces them with this item.",
    )


class AssistantDeltaEvent(_Event):
    """Append-mode partial assistant text from sources that stream partials.

    Live only: published to connected streams but never stored, so it is in no snapshot, no
    replay and no `items/{id}` lookup. Its SSE message has no `id:` line (Last-Event-ID keeps
    naming the last stored item); `id` is empty and `seq` is the seq of the last stored item.
    The complete `assistant` item with the same `segment_id` follows and replaces it.
    """

    type: Literal["assistant_delta"] = "assistant_delta"
    segment_id: str
    text: str
    truncated: bool = Field(
        default=False,
        exclude_if=lambda v: not v,
        description="Present (true) only on the last delta of a segment that passed "
        "`--max-chars`: its text ends the cut text with `…` and no more deltas follow; the "
        "complete item carries `full_length`.",
    )


class ThinkingDeltaEvent(_Event):
    """Append-mode partial reasoning, live only like `assistant_delta`; the complete `thinking`
    item with the same `segment_id` follows and replaces it."""

    type: Literal["thinking_delta"] = "thinking_delta"
    segment_id: str
    text: str
    truncated: bool = Field(
        default=False,
        exclude_if=lambda v: not v,
        description="As on `assistant_delta`: true on the segment's last, cut delta.",
    )


class ToolProgressEvent(_Event):
    """A running tool call is still running: live only like `assistant_delta` (no `id:` line,
    never stored). The panel shows the time on the tool's card until its result arrives."""

    type: Literal["tool_progress"] = "tool_progress"
    tool_use_id: str
    name: str = ""
    elapsed_ms: int | None = Field(
        default=None, description="How long the tool has been running, when the agent says."
    )


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
    """Compaction, API errors, mode changes, notices, background tasks, and record types the
    adapter does not know (`subtype: unknown`)."""

    type: Literal["system"] = "system"
    subtype: str
    content: str
    truncated: bool = False
    full_length: int = 0
    # Absent unless set: only a `rewind` line carries it.
    abandoned_after: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description=(
            "Present only on a `rewind` line (the user rewound the conversation and went on "
            "from an earlier message): the items with a seq above this and below this line's "
            "own seq are the abandoned branch, to be shown dimmed and collapsed. Items are never "
            "rewritten once published, so the mark rides on the line where the branch starts."
        ),
    )


class ErrorEvent(_Event):
    """An error the agent or source reported."""

    type: Literal["error"] = "error"
    message: str


SessionItem = Annotated[
    AssistantEvent
    | ToolUseEvent
    | ToolResultEvent
    | TurnCompleteEvent
    | TurnDurationEvent
    | UserEvent
    | ThinkingEvent
    | AssistantDeltaEvent
    | ThinkingDeltaEvent
    | ToolProgressEvent
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
    total: int  # items the server holds for the session
    cursor: str | None
    epoch: str
    session: str
    # Bytes of the transcript before the first item held (0 unless a huge transcript was read
    # from near its end): earlier history exists that `total` does not count.
    skipped_bytes: int = 0


class ResetMessage(_Control):
    """The client's Last-Event-ID cannot be resumed; a snapshot follows."""

    type: Literal["reset"] = "reset"
    reason: str
    epoch: str


class SessionStatusMessage(_Control):
    """The session's state changed, or the followed workspace switched session.

    One rule gives the state, in every route and tool (docs/api.md, "Session states"): `ended`
    when its file was removed or a `SessionEnd` hook said so; else what Claude Code hooks said
    last, or else its source (a pushed run's protocol says it; a transcript's last line lets it
    be inferred: a turn's end is `idle`, anything else `running`); and a `running` or `waiting`
    session with no live agent process and no write or hook for the idle time (120 s,
    `serve --idle-time`) is `idle`, after a restart too. `exact` tells a state a hook or the
    protocol said from one inferred from files, processes and time."""

    type: Literal["session_status"] = "session_status"
    state: SessionState
    session: str
    reason: str | None = Field(
        default=None,
        description="Why, when the state alone says too little: `waiting` with `permission` (a "
        "tool needs approval) or `input` (the agent asks the user); `ended` with the reason its "
        'source gives, e.g. "file removed" (the session\'s file was deleted or moved away). '
        "Absent otherwise; also sent when a stream starts on such a session.",
    )
    exact: bool = Field(
        default=False,
        description="True when a Claude Code hook or the agent's protocol said the state; false "
        "when it was inferred from the transcript, the agent process and the time since the last "
        "write (docs/api.md, Session states).",
    )


ActivityType = Literal["command_start", "command_end", "navigation", "console", "error"]


class ActivityRef(BaseModel):
    """An element reference the agent's browser tool reported for a page (`@e5` → selector)."""

    model_config = ConfigDict(extra="forbid")

    ref: str = Field(description="The tool's handle for the element, e.g. `e5` or `@e5`.")
    role: str = Field(default="", description="ARIA role, for matching when no selector fits.")
    name: str = Field(default="", description="Accessible name.")
    selector: str = Field(default="", description="CSS selector, when the tool knows one.")


class ActivityLink(BaseModel):
    """The session item an activity entry is linked to (browser-link): enough to name it
    ("from Claude: click e5 · turn 4") and to open it."""

    model_config = ConfigDict(extra="forbid")

    session: str = Field(description="Session id of the tool call.")
    item_id: str = Field(description="Id of its `tool_use` item.")
    agent: str = Field(description="The session's agent (`claude`, `codex`, `acp`...).")
    name: str = Field(description="The tool's name, e.g. `mcp__playwright__browser_click`.")
    label: str = Field(description="A short one-line description of the call, e.g. `click e5`.")
    turn: int = Field(description="1-based turn of the session in which the call was made.")


class ActivityEntry(BaseModel):
    """A browse action or observation, as stored and streamed.

    Sent on `GET /activity/stream` as `id: <epoch>.<seq>`, `event: activity`, `data: <entry>`;
    `data.id` equals the `id:` line. Ids are one sequence across all workspaces, so the same id
    resumes a per-workspace stream and the all-workspaces stream. Start and end of a command are
    separate entries; the end carries `start_id`. Typed values are already redacted.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default="", description="`<epoch>.<seq>`, assigned by the server.")
    seq: int = Field(default=0, description="Position in the activity log (all workspaces).")
    type: ActivityType = Field(
        default="command_end",
        description="`command_start`/`command_end` for agent commands; `navigation`, `console` "
        "and `error` for observations (CDP observer, page events).",
    )
    request_id: str | None = Field(
        default=None, description="Sender's id joining a `command_start` to its `command_end`."
    )
    start_id: str | None = Field(
        default=None, description="On a `command_end`: the `id` of its `command_start`."
    )
    command: str = Field(
        default="", description="The verb: `goto`, `click`, `fill`, `navigate`, `console.error`…"
    )
    args: list[str] = Field(
        default_factory=list,
        description="Arguments, target first; typed values are `[REDACTED:typed]`.",
    )
    url: str | None = Field(default=None, description="The page URL (secrets redacted).")
    tab_id: int | str | None = None
    workspace: str | None = Field(
        default=None, description="Workspace id (12 hex digits); null when the sender gave none."
    )
    source: str | None = Field(
        default=None,
        description="Who reported it: `cdp`, `mcp`, `page` (the extension, on an overlay site), "
        "or the sender's own label.",
    )
    status: Literal["ok", "error"] | None = Field(
        default=None, description="Outcome; a `command_end` without one is `error` iff `error`."
    )
    duration_ms: int | None = Field(
        default=None, description="Duration; derived from the start's `ts` when not reported."
    )
    result: str | None = Field(default=None, description="Short result, truncated (`truncated`).")
    truncated: bool = Field(default=False, description="Whether `result` was cut.")
    error: str | None = Field(default=None, description="Error message, when it failed.")
    refs: list[ActivityRef] = Field(
        default_factory=list, description="Element refs seen on `url` (`GET /api/refs`)."
    )
    ts: str = Field(default="", description="ISO 8601 time; the server's clock if not given.")
    # Absent (not null) unless set, so entries that no tool call explains keep their v1 form.
    tool_use_id: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The agent's tool call that caused this entry: reported by the sender, or "
        "derived by the server from the call's time window (browser-link).",
    )
    link: ActivityLink | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Where that tool call is in its session (derived when sent, never stored).",
    )


class GapMessage(_Control):
    """Activity stream: entries after the client's cursor are gone; what remains follows.

    Sent (without an `id:` line) before the replay when `Last-Event-ID` fell out of the ring,
    belongs to an old epoch, or when a slow client fell behind. With `reset` the cursor was from
    another epoch: ids changed, so the client should drop what it shows before the replay.
    """

    type: Literal["gap"] = "gap"
    missed: int = Field(description="How many entries after the cursor can no longer be sent.")
    reset: bool = False


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
    TurnDurationEvent,
    UserEvent,
    ThinkingEvent,
    AssistantDeltaEvent,
    ThinkingDeltaEvent,
    ToolProgressEvent,
    PlanEvent,
    SystemEvent,
    ErrorEvent,
)
# Published to live streams but never stored (no id, in no snapshot or replay).
LIVE_ONLY_TYPES = frozenset({"assistant_delta", "thinking_delta", "tool_progress"})
