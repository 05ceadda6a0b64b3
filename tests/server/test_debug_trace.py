"""`--debug-events-jsonl`: every line names its session; live-only events are in it; a restart
writes `server_start` instead of the restored sessions (unless `--debug-replay`); a path that
cannot be written is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sidemirror import cli
from sidemirror.core.store import workspace_id_for

from tests.harness.auth import NDJSON
from tests.harness.paths import FIXTURES
from tests.harness.ports import free_port
from tests.server.support import ClientFactory

WORKSPACE = "/home/dev/project"


def read(trace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


async def post(client: Any, body: bytes, fmt: str) -> None:
    resp = await client.post(
        "/api/ingest", params={"workspace": WORKSPACE, "format": fmt}, data=body, headers=NDJSON
    )
    assert resp.status == 200, await resp.text()


async def test_every_line_names_its_session_and_live_events_are_in(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    trace = tmp_path / "events.jsonl"
    client = await make_client(debug_events_jsonl=trace)
    await post(client, (FIXTURES / "stream-json/streaming-haiku.jsonl").read_bytes(), "stream-json")
    await post(client, (FIXTURES / "acp/tool-progress.jsonl").read_bytes(), "acp")
    lines = read(trace)
    assert lines[0]["event"] == "server_start"
    assert all({"workspace", "session", "event"} <= set(line) for line in lines)
    ws_id = workspace_id_for(WORKSPACE)
    assert {line["workspace"] for line in lines[1:]} == {ws_id}
    events = {line["event"] for line in lines}
    assert {"assistant_delta", "tool_progress", "session_status", "turn_complete"} <= events
    delta = next(line for line in lines if line["event"] == "assistant_delta")
    assert delta["type"] == "assistant_delta" and delta["id"] == ""  # live only: no id
    status = next(line for line in lines if line["event"] == "session_status")
    assert status["type"] == "session_status" and status["state"] in ("running", "idle")


async def test_a_restart_marks_itself_instead_of_writing_restored_sessions_again(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    trace = tmp_path / "events.jsonl"
    first = await make_client(debug_events_jsonl=trace)
    await post(first, (FIXTURES / "acp/tool-progress.jsonl").read_bytes(), "acp")
    await first.close()
    before = read(trace)
    await (await make_client(debug_events_jsonl=trace)).close()
    after = read(trace)
    assert after[: len(before)] == before
    (start,) = after[len(before) :]
    assert (start["event"], start["replay"]) == ("server_start", False)

    await (await make_client(debug_events_jsonl=trace, debug_replay=True)).close()
    replayed = read(trace)[len(after) :]
    assert replayed[0]["event"] == "server_start" and replayed[0]["replay"] is True
    stored = [line for line in before if line["event"] not in ("server_start", "session_status")]
    stored = [line for line in stored if line["id"]]  # live-only events are not journaled
    assert [line["id"] for line in replayed[1:] if line.get("id")] == [
        line["id"] for line in stored
    ]


@pytest.mark.parametrize("where", ["a directory", "under a file"])
def test_a_path_that_cannot_be_written_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    (tmp_path / "file").write_text("x")
    path = tmp_path if where == "a directory" else tmp_path / "file" / "trace.jsonl"
    # Its own data dir and port: the default ones may be held by the user's server, or by the
    # other case of this test on the other worker.
    argv = ["serve", "--debug-events-jsonl", str(path), "--runtime-dir", str(tmp_path)]
    code = cli.main([*argv, "--data-dir", str(tmp_path / "data"), "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"sidemirror: --debug-events-jsonl {path}: ")
