"""The export route streams: a long session's file comes in many chunks while the walk reads
it, and a client that leaves mid-download stops the walk (its thread ends, nothing waits on a
full queue); the server answers as before."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from sidemirror.export.api import ExportError
from sidemirror.web import session_export
from sidemirror.web.session_export import CHUNK

from tests.harness.auth import AUTH
from tests.harness.waiting import until
from tests.server.support import ClientFactory, ingest

WS = "/home/dev/exported"
TEXT = "a line of a long reply, " * 40  # ~1 KB an item


async def test_a_client_that_leaves_stops_the_export(
    make_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ended: list[BaseException | None] = []  # how each walk ended: None, or what stopped it
    done = threading.Event()
    walk = session_export._walk

    def watched(*args: Any) -> None:
        try:
            walk(*args)
            ended.append(None)
        except BaseException as exc:
            ended.append(exc)
            raise
        finally:
            done.set()

    monkeypatch.setattr(session_export, "_walk", watched)
    client = await make_client()
    for batch in range(8):
        lines = [{"type": "assistant", "content": f"{batch}.{n} {TEXT}"} for n in range(500)]
        await ingest(client, lines, workspace=WS, session="long")
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]
    url = f"/workspace/{ws['id']}/session/export"

    # Whole: every item, in order, in more chunks than the queue holds.
    resp = await client.get(url, params={"session": "long", "format": "jsonl"}, headers=AUTH)
    assert resp.status == 200
    body = await resp.read()
    assert body.count(b"\n") == 4000 and len(body) > 20 * CHUNK
    assert body.index(b'"0.0 ') < body.index(b'"7.499 ')
    assert ended == [None]

    # Left after the first chunk: the walk stops at its next step, and the server still answers.
    done.clear()
    resp = await client.get(url, params={"session": "long", "format": "md"}, headers=AUTH)
    assert resp.status == 200
    assert await resp.content.read(CHUNK)
    resp.close()
    await until(done.is_set, 20, what="the export's walk ended")
    assert isinstance(ended[-1], ExportError), ended  # stopped, not run to its end
    again = await client.get(
        f"/workspace/{ws['id']}/session/summary", params={"session": "long"}, headers=AUTH
    )
    assert again.status == 200 and (await again.json())["items"] == 4000
    await client.close()
