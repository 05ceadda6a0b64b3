"""What clients are shown of workspaces and sessions: summaries and snapshot bodies.

The REST routes, the SSE stream and the MCP tools all answer from these, so a field means the
same thing (and is spelled the same way) wherever a client reads it.
"""

from __future__ import annotations

import json
from typing import Any

from sidemirror.core.clock import iso_from_epoch
from sidemirror.core.states import BUSY
from sidemirror.core.store import SessionLog, Store, Workspace
from sidemirror.core.totals import UNKNOWN


def session_summary(log: SessionLog) -> dict[str, Any]:
    summary = {
        "id": log.session_id,
        "agent": log.agent,
        "title": log.title,
        "started_at": log.started_at,
        "last_activity": iso_from_epoch(log.last_activity),
        "active": log.state in BUSY,
        # The one rule of core/states.py; `exact`: said by a hook or the protocol, not inferred.
        "state": log.state,
        "reason": log.state_reason,  # null, or why: `waiting` `permission`, `ended` "file removed"
        "exact": log.state_exact,
        # null until the session is first read: indexing never parses archived transcripts.
        "items": len(log.items) if log.loader is None else None,
        # Sums of its `turn_complete` items (core/totals.py); null until they are known.
        **(UNKNOWN if log.totals is None else log.totals.listed()),
    }
    if log.parent_id is not None:  # present only on a sub-agent's thread
        summary["parent_id"] = log.parent_id
    return summary


def workspace_summary(ws: Workspace) -> dict[str, Any]:
    return {
        "id": ws.id,
        "name": ws.name,
        "branch": ws.branch,
        "directory": ws.directory,
        "pid": ws.pid,
        "active": ws.active,
        "agent": ws.agent,
        "last_activity": iso_from_epoch(ws.last_activity),
        "sessions": len(ws.sessions),
        # null on this machine; a forwarded host's label and whether its forwarder is there.
        "host": ws.host.view() if ws.host is not None else None,
    }


def snapshot_head(log: SessionLog) -> dict[str, Any]:
    """Where a snapshot stands in its log: a client resumes from `cursor` under `epoch`."""
    return {
        "epoch": log.epoch,
        "workspace": log.workspace_id,
        "session": log.session_id,
        "cursor": log.cursor,
        "total": len(log.items),
        # Bytes of a huge transcript before the part read (0 when it was read whole).
        "skipped_bytes": log.skipped_bytes,
    }


def dumps(data: object) -> str:
    """Compact one-line JSON, as every body and SSE message carries it."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def snapshot_json(store: Store, log: SessionLog, limit: int, **extra: Any) -> str:
    """The latest `limit` items with `snapshot_head`, as JSON text. Items are spliced in as the
    wire JSON the log caches, not re-encoded: a snapshot of 10,000 items costs one join."""
    total = len(log.items)
    items = ",".join(store.iter_wire(log, max(0, total - limit), total))
    head = dumps({**extra, **snapshot_head(log)})
    return head[:-1] + ',"items":[' + items + "]}"
