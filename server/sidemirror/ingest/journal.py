"""Append-only journals of ingested sessions under `<data dir>/ingest/`.

One file per session: a header line (epoch, workspace, session, agent), then one canonical item
per line, written before the item is published. Replaying the file after a restart rebuilds the
same log, so ids (positions) stay valid and clients resume exactly (DESIGN §1).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
from pathlib import Path

from pydantic import ValidationError

from sidemirror.core.models import SESSION_ITEM_ADAPTER
from sidemirror.core.store import SessionLog, Store
from sidemirror.sources.base import Emitted

log = logging.getLogger(__name__)
FORMAT = 1


class Journals:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._fds: dict[tuple[str, str], int] = {}

    def _path(self, ws_id: str, session_id: str) -> Path:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:16]
        return self.root / ws_id / f"{digest}.jsonl"

    def _append_line(self, key: tuple[str, str], path: Path, line: str) -> None:
        fd = self._fds.get(key)
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._fds[key] = fd
        os.write(fd, (line + "\n").encode("utf-8"))

    def write(self, store: Store, directory: str, agent: str, emitted: Emitted) -> None:
        ws = store.ensure_workspace(directory, agent)
        key = (ws.id, emitted.session_id)
        path = self._path(*key)
        session = ws.sessions.get(emitted.session_id)
        if session is None:
            epoch = secrets.token_hex(4)
            header = {
                "sidemirror_journal": FORMAT,
                "epoch": epoch,
                "workspace": ws.directory,
                "session": emitted.session_id,
                "agent": agent,
            }
            self._append_line(key, path, json.dumps(header))
            session = store.ensure_session(ws, emitted.session_id, agent, epoch)
        if emitted.title is not None:
            self._append_line(key, path, json.dumps({"title": emitted.title}))
            session.title = emitted.title
        if emitted.item is not None and emitted.item.type == "assistant_delta":
            # Partial text is live only: the complete item that follows is what is kept.
            store.publish_ephemeral(session, emitted.item)
        elif emitted.item is not None:
            item = emitted.item
            self._append_line(key, path, item.model_dump_json(exclude={"id", "seq"}))
            if session.started_at is None:
                session.started_at = item.ts
            store.append(session, item)
        store.touch(session)
        if emitted.state is not None:
            store.set_state(session, emitted.state)

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
                log.warning("cannot read journal %s: %s", path, exc)
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
            log.warning("journal %s has no valid header; left alone", path)
            store.count_parse_error()
            return False
        ws = store.ensure_workspace(directory, agent)
        session: SessionLog = store.ensure_session(ws, session_id, agent, epoch)
        for raw in lines[1:]:
            try:
                record = json.loads(raw)
                if "type" not in record:
                    session.title = record.get("title", session.title)
                    continue
                item = SESSION_ITEM_ADAPTER.validate_python(record)
            except (ValueError, ValidationError, AttributeError):
                store.count_parse_error()
                continue
            if session.started_at is None:
                session.started_at = item.ts
            store.append(session, item)
        store.touch(session, path.stat().st_mtime)
        return True

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
