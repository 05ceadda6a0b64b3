"""`--debug-events-jsonl`: every event the server sends, as projected, one JSON line each.

A line is `{"workspace", "session", "event": <type>, ...the event}`: stored items as streams
send them, live-only partials (`assistant_delta`, `thinking_delta`, `tool_progress`),
`session_status` and `reset`. It is a store tap, so it sees what subscribers see, in order.
Each start writes `{"event": "server_start", …}`; the ingested sessions the server restores from
its journal are not written again unless `--debug-replay` asks for them (after that line).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from sidemirror.core.clock import now_iso
from sidemirror.core.hub import (
    EphemeralPublished,
    ItemPublished,
    LogReset,
    Message,
    SessionSwitched,
    StateChanged,
)
from sidemirror.core.private import open_private, private_dir
from sidemirror.core.store import SessionLog, Store


def path_problem(path: Path) -> str | None:
    """Why the trace cannot be written at `path` (a one-line reason), or None if it can."""
    try:
        if not path.parent.is_dir():
            private_dir(path.parent)  # as DebugTrace would make it: private
        os.close(open_private(path, os.O_WRONLY | os.O_APPEND))
        return None
    except OSError as exc:
        return exc.strerror or str(exc)


class DebugTrace:
    def __init__(self, path: Path, store: Store, version: str = "") -> None:
        self.store = store
        self.version = version  # the server's, for the `server_start` line
        # Every projected item: session text, so only this user may read it. A folder we make
        # for it is private too; one the user chose is left as it is.
        if not path.parent.is_dir():
            private_dir(path.parent)
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        self.fh: IO[str] = os.fdopen(fd, "a", encoding="utf-8")
        self.attached = False
        self.replay = False

    def start(self, *, replay: bool) -> None:
        """Mark this start; with `replay`, trace from here on (restored sessions included)."""
        line = {
            "workspace": None,
            "session": None,
            "event": "server_start",
            "ts": now_iso(),
            "version": self.version,
            "pid": os.getpid(),
            "replay": replay,
        }
        self._write(json.dumps(line, separators=(",", ":")))
        self.replay = replay
        if replay:
            self.attach()

    def attach(self) -> None:
        if not self.attached:
            self.attached = True
            self.store.taps.append(self)

    def __call__(self, log: SessionLog, message: Message) -> None:
        if not self.replay and log.loading is not None and not log.loading.done():
            # A session read for the first time rebuilds what a journal or file already held:
            # history, traced when it happened, not an event now (`--debug-replay` wants it).
            return
        if isinstance(message, ItemPublished):
            # Called just after the append: the item is the newest, its wire JSON cached.
            wire = self.store.wire_json(log, len(log.items) - 1)
            self._write(self._head(log, log.session_id, message.item.type) + wire[1:])
        elif isinstance(message, EphemeralPublished):
            event = self.store.projector.to_dict(message.item)
            self._line(log, log.session_id, message.item.type, event)
        elif isinstance(message, StateChanged):
            # As the session stream sends it (web/session_stream.py).
            status: dict[str, object] = {
                "type": "session_status",
                "state": message.state,
                "session": log.session_id,
            }
            if message.reason is not None:
                status["reason"] = message.reason
            status["exact"] = message.exact
            self._line(log, log.session_id, "session_status", status)
        elif isinstance(message, SessionSwitched):
            # Followers of the workspace now see this session.
            status = {"type": "session_status", "state": log.state, "session": log.session_id}
            self._line(log, log.session_id, "session_status", status)
        elif isinstance(message, LogReset):
            reset = {"type": "reset", "reason": "log_reset", "epoch": message.epoch}
            self._line(log, log.session_id, "reset", reset)

    def _head(self, log: SessionLog, session: str, event: str) -> str:
        head = json.dumps({"workspace": log.workspace_id, "session": session, "event": event})
        return head[:-1] + ","

    def _line(self, log: SessionLog, session: str, event: str, body: dict[str, Any]) -> None:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        self._write(self._head(log, session, event) + text[1:])

    def _write(self, line: str) -> None:
        self.fh.write(line + "\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()
