"""Bounded open files: more activity workspaces and ingested sessions than the server may open
files. Journal and activity files are held in a small LRU, so one request naming 1,011
workspaces (or sessions) leaves the server able to take the next ones; before, each kept a file
open for good and the server answered 500 once the descriptors ran out, until a restart.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

import psutil

from tests.harness.auth import AUTH, NDJSON
from tests.harness.logs import unexpected_tracebacks
from tests.harness.server import Server

from .report import record

FD_LIMIT = 256  # soft and hard: a server that raises its soft limit cannot pass this one
MANY = 1_011


def _post(server: Server, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    reply = server.exchange("POST", path, body, headers, timeout=120)
    return reply.status, reply.json_or_text() if reply.status == 200 else reply.text()


def _activity(server: Server, workspaces: list[str]) -> tuple[int, Any]:
    body = json.dumps([{"command": "open", "workspace": w} for w in workspaces]).encode()
    return _post(server, "/api/activity", body, {**AUTH, "Content-Type": "application/json"})


def _ingest(server: Server, workspace: str, sessions: list[str]) -> tuple[int, Any]:
    body = "".join(json.dumps({"type": "user", "content": "hi", "session": s}) + "\n"
                   for s in sessions).encode()  # fmt: skip
    return _post(server, f"/api/ingest?workspace={workspace}", body, NDJSON)


def test_more_workspaces_and_sessions_than_file_descriptors(tmp_path: Path) -> None:
    server = Server(tmp_path)
    server.start()
    try:
        assert server.proc is not None
        resource.prlimit(server.proc.pid, resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))
        proc = psutil.Process(server.proc.pid)
        statuses = {
            "activity_many": _activity(server, [f"/home/dev/a{n}" for n in range(MANY)]),
            "activity_next": _activity(server, ["/home/dev/next"]),
            "ingest_many": _ingest(server, "/home/dev/i", [f"s{n}" for n in range(MANY)]),
            "ingest_next": _ingest(server, "/home/dev/next", ["s"]),
            "activity_after": _activity(server, ["/home/dev/after"]),
        }
        fds = proc.num_fds()
        log = server.stderr()
    finally:
        server.stop()
    codes = {k: v[0] for k, v in statuses.items()}
    record(
        f"open files: {MANY} activity workspaces + {MANY} ingested sessions, fd limit {FD_LIMIT}",
        {"statuses": codes, "open_fds_after": fds},
        trials=1,
    )
    assert set(codes.values()) == {200}, statuses
    assert statuses["activity_many"][1]["accepted"] == MANY
    assert statuses["ingest_many"][1]["accepted"] == MANY
    assert fds <= 2 * 64 + 40, fds  # 64 journal and 64 activity files at most, sockets, the rest
    assert not unexpected_tracebacks(log), log[-3000:]
