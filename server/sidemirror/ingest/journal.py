"""The ingest journal: append-only files of pushed sessions under `<data dir>/ingest/`.

One file per session: a header line (epoch, workspace, session, agent), then one canonical item
per line, written before the item is published. Replaying the file after a restart rebuilds the
same log, so ids (positions) stay valid and clients resume exactly.
(Not to be confused with a file session's merge order, `sources/files/merge_order.py`.)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import time
from pathlib import Path

from pydantic import ValidationError

from sidemirror.core.models import SESSION_ITEM_ADAPTER, SessionItem
from sidemirror.core.private import open_private, private_dir
from sidemirror.core.store import SessionLog, SessionUpdate, Store
from sidemirror.sources.base import Emitted

logger = logging.getLogger(__name__)
FORMAT = 1


class IngestJournal:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._fds: dict[tuple[str, str], int] = {}

    def _path(self, ws_id: str, session_id: str) -> Path:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:16]
        return self.root / ws_id / f"{digest}.jsonl"

    def _append_line(self, key: tuple[str, str], line: str) -> None:
        fd = self._fds.get(key)
        if fd is None:
            path = self._path(*key)
            private_dir(path.parent)
            fd = open_private(path, os.O_WRONLY | os.O_APPEND)
            self._fds[key] = fd
        os.write(fd, (line + "\n").encode("utf-8"))

    def _session(self, store: Store, directory: str, agent: str, session_id: str) -> SessionLog:
        """The session's log, opening its journal file (header first) the first time."""
        ws = store.ensure_workspace(directory, agent)
        session = ws.sessions.get(session_id)
        if session is None:
            epoch = secrets.token_hex(4)
            header = {
                "sidemirror_journal": FORMAT,
                "epoch": epoch,
                "workspace": ws.directory,
                "session": session_id,
                "agent": agent,
            }
            self._append_line((ws.id, session_id), json.dumps(header))
            session = store.ensure_session(ws, session_id, agent, epoch)
        return session

    def write(self, store: Store, directory: str, agent: str, emitted: Emitted) -> None:
        """Journal what a converter emitted, then hand it to the store."""
        session = self._session(store, directory, agent, emitted.session_id)
        key = (session.workspace_id, emitted.session_id)
        if emitted.title is not None:
            self._append_line(key, json.dumps({"title": emitted.title}))
        items: list[SessionItem] = []
        live: list[SessionItem] = []
        if emitted.item is not None and emitted.item.type == "assistant_delta":
            live.append(emitted.item)  # partial text is live only: the complete item is kept
        elif emitted.item is not None:
            self._append_line(key, emitted.item.model_dump_json(exclude={"id", "seq"}))
            items.append(emitted.item)
        update = SessionUpdate(
            items=items,
            live=live,
            title=emitted.title,
            started_at=items[0].ts if items else None,
            touched_at=time.time(),
            state=emitted.state,
        )
        store.write(session, update)

    def restore(self, store: Store) -> int:
        """Rebuild every journaled session; returns how many sessions were restored."""
        count = 0
        if not self.root.is_dir():
            return 0
        for path in sorted(self.root.glob("*/*.jsonl")):
            try:
                if self._restore_file(store, path):
                    count += 1
            except OSError as exc:
                logger.warning("cannot read journal %s: %s", path, exc)
        return count

    def _restore_file(self, store: Store, path: Path) -> bool:
        data = path.read_bytes()
        lines = data.split(b"\n")
        # A torn final line (crash mid-write) is cut off so the next append starts clean.
        good_end = len(data) - len(lines[-1])
        if lines[-1]:
            with path.open("r+b") as fh:
                fh.truncate(good_end)
        lines = lines[:-1]
        if not lines:
            return False
        try:
            header = json.loads(lines[0])
            epoch, directory = str(header["epoch"]), str(header["workspace"])
            session_id, agent = str(header["session"]), str(header["agent"])
        except (ValueError, KeyError, TypeError):
            logger.warning("journal %s has no valid header; left alone", path)
            store.count_parse_error()
            return False
        ws = store.ensure_workspace(directory, agent)
        session = store.ensure_session(ws, session_id, agent, epoch)
        items: list[SessionItem] = []
        title: str | None = None
        errors = 0
        for raw in lines[1:]:
            try:
                record = json.loads(raw)
                if "type" not in record:
                    title = record.get("title", title)
                    continue
                items.append(SESSION_ITEM_ADAPTER.validate_python(record))
            except (ValueError, ValidationError, AttributeError):
                errors += 1
        update = SessionUpdate(
            items=items,
            errors=errors,
            title=title,
            started_at=items[0].ts if items else None,
            touched_at=path.stat().st_mtime,
        )
        store.write(session, update)
        return True

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
