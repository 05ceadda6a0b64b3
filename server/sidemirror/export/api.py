"""The reads an export makes of the running server, over the one connection on which the server
proved itself (server_check.py): the workspaces, a workspace's sessions, a session's pages, one
item whole. Standard library only."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode


class ExportError(Exception):
    """Why an export cannot be made, said as is on stderr."""


class ServerReader:
    def __init__(self, conn: http.client.HTTPConnection, token: str) -> None:
        self.conn = conn
        self.headers = {"Authorization": f"Bearer {token}", "Host": f"127.0.0.1:{conn.port}"}

    def get(self, path: str, **params: object) -> Any:
        query = urlencode({k: v for k, v in params.items() if v is not None})
        url = f"{path}?{query}" if query else path
        try:
            self.conn.request("GET", url, headers=self.headers)
            resp = self.conn.getresponse()
            body = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            raise ExportError(f"the server stopped answering ({exc})") from None
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if resp.status != 200:
            error = answer.get("error") if isinstance(answer, dict) else None
            why = (
                error.get("message")
                if isinstance(error, dict)
                else body[:200].decode(errors="replace")
            )
            raise ExportError(f"the server answered {resp.status} to {path}: {why}")
        return answer


@dataclass
class Located:
    workspace: dict[str, Any]  # as GET /api/workspaces lists it
    session: dict[str, Any]  # as GET /workspace/{ws}/sessions lists it


def _workspaces(reader: ServerReader, wanted: str | None) -> list[dict[str, Any]]:
    every: list[dict[str, Any]] = reader.get("/api/workspaces")["workspaces"]
    if wanted is None:
        return every
    as_dir = str(Path(wanted).expanduser().resolve()) if "/" in wanted or wanted == "." else None
    fits = [
        ws
        for ws in every
        if wanted in (ws.get("id"), ws.get("name"), ws.get("directory"))
        or (as_dir is not None and ws.get("directory") == as_dir)
    ]
    if not fits:
        raise ExportError(f"no workspace {wanted!r} (an id, a name or a directory)")
    return fits


def locate(reader: ServerReader, session: str, workspace: str | None) -> Located:
    """The one session whose id is `session` or starts with it, in `workspace` if given.
    Several that fit are listed, so the user can give more of the id or the workspace."""
    found: list[Located] = []
    for ws in _workspaces(reader, workspace):
        listed = reader.get(f"/workspace/{quote(ws['id'], safe='')}/sessions")["sessions"]
        exact = [s for s in listed if s["id"] == session]
        found += [Located(ws, s) for s in exact or listed if s["id"].startswith(session)]
    exact_found = [f for f in found if f.session["id"] == session]
    found = exact_found or found
    if not found:
        where = f" in workspace {workspace!r}" if workspace else ""
        raise ExportError(f"no session {session!r}{where}")
    if len(found) > 1:
        names = "; ".join(f"{f.session['id']} ({f.workspace['directory']})" for f in found[:10])
        raise ExportError(
            f"{len(found)} sessions fit {session!r}: {names}. Give more of the id, or --workspace."
        )
    return found[0]


class HttpPages:
    """A session's pages and items as the running server answers them (walker.SessionPages)."""

    def __init__(self, reader: ServerReader, located: Located) -> None:
        self.reader = reader
        self.base = f"/workspace/{quote(located.workspace['id'], safe='')}/session"
        self.sid = located.session["id"]

    def page(self, before: str | None, limit: int) -> dict[str, Any]:
        answer: dict[str, Any] = self.reader.get(
            self.base, session=self.sid, limit=limit, before=before
        )
        return answer

    def whole(self, item_id: str) -> dict[str, Any]:
        path = f"{self.base}/items/{quote(item_id, safe='')}"
        answer: dict[str, Any] = self.reader.get(path, session=self.sid)
        return answer
