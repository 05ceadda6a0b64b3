"""`GET /workspace/{id}/session/changes`: every file a session's edits touched, with net lines.

Built from the `diff` each edit's `tool_use` carries (every file of `diffs` for a patch of several:
sources/diffs.py), so it says what the timeline says; each file names the tool calls that touched
it, for the panel to jump to them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aiohttp import web

from sidemirror.core.models import SessionItem, ToolUseEvent
from sidemirror.web.sessions import session_of, workspace_of
from sidemirror.web.state import APP_STATE


def files_changed(items: Iterable[SessionItem]) -> list[dict[str, Any]]:
    """Every file the items' edits touched, in the order first touched, with net lines and the
    tool calls that touched it."""
    files: dict[str, dict[str, Any]] = {}
    for item in items:
        if not isinstance(item, ToolUseEvent) or item.diff is None:
            continue
        for diff in item.diffs or [item.diff]:
            entry = files.setdefault(
                diff.path,
                {"path": diff.path, "added": 0, "removed": 0, "tool_use_ids": [], "item_ids": []},
            )
            entry["added"] += diff.added
            entry["removed"] += diff.removed
            if item.tool_use_id not in entry["tool_use_ids"]:  # a patch naming a file twice
                entry["tool_use_ids"].append(item.tool_use_id)
                entry["item_ids"].append(item.id)
    return list(files.values())


async def session_changes(request: web.Request) -> web.Response:
    state = request.app[APP_STATE]
    log = session_of(workspace_of(request), request.query.get("session"))
    await state.store.load(log)
    return web.json_response(
        {
            "workspace": log.workspace_id,
            "session": log.session_id,
            "epoch": log.epoch,
            # The files are those of the items held: a huge transcript's skipped part is not
            # read for this (its edits appear as a client pages back to them).
            "skipped_bytes": log.skipped_bytes,
            "files": files_changed(log.items),
        }
    )
