"""The activity log's ingest side under faults: an entry applied only once its line is whole,
a full disk answered 507 with what was stored, a failed fsync moving the log to a new epoch."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from sidemirror.activity.log import ActivityLog
from sidemirror.core.durable import StorageError

from tests.harness.auth import AUTH
from tests.server.support import ClientFactory, state_of

JSON = {**AUTH, "Content-Type": "application/json"}


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def write(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", write)


def test_an_entry_the_disk_refused_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = ActivityLog(tmp_path)
    start = log.report({"type": "command_start", "request_id": "r", "command": "goto"})
    _full_disk(monkeypatch)
    with pytest.raises(StorageError):
        log.report({"type": "command_end", "request_id": "r", "command": "goto"})
    monkeypatch.undo()
    assert log.seq == 1 and [e.id for e in log.entries(None, 10)] == [start.id]
    end = log.report({"type": "command_end", "request_id": "r", "command": "goto"})
    assert end.seq == 2 and end.start_id == start.id  # the start is still waiting for its end
    log.close()
    again = ActivityLog(tmp_path)
    assert [e.model_dump() for e in again.entries(None, 10)] == [start.model_dump(),
                                                                  end.model_dump()]  # fmt: skip


async def test_post_on_a_full_disk_is_507_naming_what_was_stored(
    make_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    real = os.write
    writes = [0]

    def write(fd: int, data: Any) -> int:
        writes[0] += 1
        if writes[0] > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    resp = await client.post("/api/activity", headers=JSON, data=json.dumps(
        [{"command": "a"}, {"nope": 1}, {"command": "b"}, {"command": "c"}]))  # fmt: skip
    monkeypatch.undo()
    body = await resp.json()
    assert resp.status == 507, body
    assert body["error"]["code"] == "disk_full"
    assert str(tmp_path / "data") in body["error"]["message"]
    assert (body["accepted"], body["rejected"], body["first_unstored"]) == (1, 1, 2)
    log = state_of(client).activity
    assert [e.command for e in log.entries(None, 10)] == ["a"] and body["ids"] == [f"{log.epoch}.1"]


async def test_a_failed_fsync_moves_the_log_to_a_new_epoch(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await make_client()
    resp = await client.post("/api/activity", headers=JSON, data=json.dumps({"command": "a"}))
    assert resp.status == 200
    log = state_of(client).activity
    old = log.epoch

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)
    resp = await client.post("/api/activity", headers=JSON, data=json.dumps({"command": "b"}))
    monkeypatch.undo()
    assert resp.status == 507
    assert log.epoch != old
    assert [e.id for e in log.entries(None, 10)] == [f"{log.epoch}.1", f"{log.epoch}.2"]
    assert log.parse_cursor(f"{old}.1") is None  # a client of the old epoch gets a gap reset
    resp = await client.post("/api/activity", headers=JSON, data=json.dumps({"command": "c"}))
    assert resp.status == 200 and (await resp.json())["ids"] == [f"{log.epoch}.3"]
