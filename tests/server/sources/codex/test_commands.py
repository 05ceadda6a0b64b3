"""Codex command cards tell what the command did, as the panel receives them over HTTP.

The rollout is the recorded Codex Desktop one (tests/fixtures/codex/), written to a watched
folder and appended to while the server follows it. No public recording holds the shapes below,
so each is built from a real line of that rollout with fields changed (said at each):
- a `function_call_output` of a command still running after its 1 s yield: the recorded output
  of `sed -n '1,220p' …/SKILL.md` with its header changed to what unified exec writes then
  (`Process running with session ID N`, `Wall time: 1.0…`, no output yet);
- its `exec_command_end` event: the same recorded line turned into the `event_msg` Codex writes
  when the process exits (`call_id`, `aggregated_output` = the recorded output, `exit_code`,
  `duration` as Rust serialises a `Duration`, `status`);
- `write_stdin` calls: the recorded `exec_command` call of `wc -l …` with its name and
  arguments changed to what `write_stdin` takes (`session_id`, `chars`), and a poll's output:
  the recorded output line with its call id, time and header changed (said in its test).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.server.sources.codex.test_source import FIXTURE, SESSION
from tests.server.sources.test_removed_files import _json, _until, _workspaces
from tests.server.support import ClientFactory

LINES = FIXTURE.read_text().splitlines()
RECORDS = [json.loads(line) for line in LINES]
SED = RECORDS[3]["payload"]  # function_call exec_command `sed -n '1,220p' …/SKILL.md`
SED_OUTPUT = RECORDS[4]  # its function_call_output, recorded
WC = RECORDS[6]  # function_call exec_command `wc -l …`
RECORDED_TEXT = SED_OUTPUT["payload"]["output"].partition("\nOutput:\n")[2]


def running_output() -> dict[str, Any]:
    """The recorded output line, as unified exec writes it while the process still runs."""
    line = json.loads(json.dumps(SED_OUTPUT))
    line["payload"]["output"] = (
        "Chunk ID: bd7d7c\nWall time: 1.0012 seconds\nProcess running with session ID 41730\n"
        "Original token count: 0\nOutput:\n"
    )
    return line


def command_end(exit_code: int, secs: int, nanos: int, output: str) -> dict[str, Any]:
    """The recorded output line turned into the `exec_command_end` event of the same call."""
    payload = {
        "type": "exec_command_end",
        "call_id": SED["call_id"],
        "process_id": "41730",
        "turn_id": "019e1695-0522-7c83-8b39-0dd379793f81",
        "command": ["/bin/zsh", "-lc", json.loads(SED["arguments"])["cmd"]],
        "cwd": "/Users/Sample_User/naya",
        "source": "unified_exec_startup",
        "stdout": output,
        "stderr": "",
        "aggregated_output": output,
        "exit_code": exit_code,
        "duration": {"secs": secs, "nanos": nanos},
        "formatted_output": output,
        "status": "completed" if exit_code == 0 else "failed",
    }
    return {"timestamp": "2026-05-11T10:29:53.441Z", "type": "event_msg", "payload": payload}


def write_stdin(call_id: str, chars: str) -> dict[str, Any]:
    """The recorded `wc -l` call with its name and arguments changed to a `write_stdin`."""
    line = json.loads(json.dumps(WC))
    args = {"session_id": 41730, "chars": chars, "yield_time_ms": 1000}
    line["payload"].update(name="write_stdin", arguments=json.dumps(args), call_id=call_id)
    return line


async def follow(make_client: ClientFactory, tmp_path: Path, lines: list[str]) -> Any:
    day = tmp_path / "codex" / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    rollout = day / FIXTURE.name
    rollout.write_text("".join(line + "\n" for line in lines))
    client = await make_client(codex_dir=tmp_path / "codex")
    (ws,) = await _until(lambda: _workspaces(client))
    return client, ws["id"], rollout


async def items(client: Any, ws: str) -> list[dict[str, Any]]:
    snapshot = await _json(client, f"/workspace/{ws}/session?session={SESSION}&limit=1000")
    return list(snapshot["items"])


def results(got: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    return [i for i in got if i["type"] == "tool_result" and i["tool_use_id"] == call_id]


def append(rollout: Path, *records: dict[str, Any]) -> None:
    with rollout.open("a") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in records))


async def test_a_command_card_takes_its_result_from_the_command_end(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    # The prompt, the reasoning and the call as recorded; the output says it is still running.
    client, ws, rollout = await follow(
        make_client, tmp_path, [*LINES[:4], json.dumps(running_output())]
    )
    call = SED["call_id"]

    async def card_shown() -> bool:
        got = await items(client, ws)
        return any(i.get("tool_use_id") == call for i in got)

    await _until(card_shown)
    # Still running: no "✓ 1.0 s (no output)" result; the card waits for the command's end.
    assert results(await items(client, ws), call) == []

    append(rollout, command_end(0, 7, 312_000_000, RECORDED_TEXT))

    async def result() -> list[dict[str, Any]]:
        return results(await items(client, ws), call)

    (done,) = await _until(result)
    assert (done["is_error"], done["duration_ms"]) == (False, 7312)
    assert done["output"].startswith("---\nname: using-superpowers")
    assert done["full_length"] == len(RECORDED_TEXT)


async def test_a_failed_command_end_says_its_exit_code_and_an_earlier_output_is_not_repeated(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    # The end comes first (a command that exits within its yield): the card shows it, and the
    # recorded output that follows adds no second result.
    failed = command_end(2, 0, 184_000_000, "sed: can't read SKILL.md: No such file\n")
    client, ws, rollout = await follow(make_client, tmp_path, [*LINES[:4], json.dumps(failed)])
    call = SED["call_id"]

    async def result() -> list[dict[str, Any]]:
        return results(await items(client, ws), call)

    (done,) = await _until(result)
    assert (done["is_error"], done["duration_ms"]) == (True, 184)
    assert done["output"] == "Exit code 2\nsed: can't read SKILL.md: No such file\n"
    append(rollout, SED_OUTPUT, RECORDS[5], RECORDS[6])  # the output, then the next call

    async def next_call() -> list[dict[str, Any]]:
        got = await items(client, ws)
        return [i for i in got if i.get("tool_use_id") == RECORDS[6]["payload"]["call_id"]]

    await _until(next_call)
    assert len(results(await items(client, ws), call)) == 1


async def test_without_its_end_event_a_command_takes_its_end_from_the_poll_that_saw_it_exit(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    # A build that persists no `exec_command_end`: the model polls the process with
    # `write_stdin`; the poll's output is the recorded output line with its call id, time and
    # header changed to what the poll that sees the process exit writes.
    client, ws, rollout = await follow(
        make_client, tmp_path, [*LINES[:4], json.dumps(running_output())]
    )
    poll = write_stdin("call_stdin_poll", "")
    exited = json.loads(json.dumps(SED_OUTPUT))
    exited["timestamp"] = "2026-05-11T10:29:53.414Z"  # 7.312 s after the call
    exited["payload"]["call_id"] = "call_stdin_poll"
    exited["payload"]["output"] = (
        "Chunk ID: 5e2a10\nWall time: 6.3021 seconds\nProcess exited with code 0\n"
        f"Original token count: 1356\nOutput:\n{RECORDED_TEXT}"
    )
    append(rollout, poll, exited)
    call = SED["call_id"]

    async def result() -> list[dict[str, Any]]:
        return results(await items(client, ws), call)

    (done,) = await _until(result)
    assert (done["is_error"], done["duration_ms"]) == (False, 7312)
    assert done["output"].startswith("---\nname: using-superpowers")
    (polled,) = results(await items(client, ws), "call_stdin_poll")
    assert polled["output"].startswith("---\nname: using-superpowers")
    # Its end event, were it written after all, adds nothing.
    append(rollout, command_end(0, 7, 312_000_000, RECORDED_TEXT), RECORDS[5], RECORDS[6])

    async def next_call() -> bool:
        got = await items(client, ws)
        return any(i.get("tool_use_id") == RECORDS[6]["payload"]["call_id"] for i in got)

    await _until(next_call)
    assert len(results(await items(client, ws), call)) == 1


async def test_write_stdin_shows_what_was_typed_redacted(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    client, ws, rollout = await follow(make_client, tmp_path, LINES[:4])
    typed = [
        write_stdin("call_stdin_yes", "y\n"),
        write_stdin("call_stdin_ctrl_c", "\u0003"),
        write_stdin("call_stdin_poll", ""),
        write_stdin("call_stdin_key", "export OPENAI_API_KEY=sk-proj-" + "a1B2c3D4e5" * 4 + "\n"),
    ]
    append(rollout, *typed)

    async def cards() -> list[str]:
        got = await items(client, ws)
        inputs = [i["input"] for i in got if i["type"] == "tool_use" and i["name"] == "write_stdin"]
        return inputs if len(inputs) == len(typed) else []

    assert await _until(cards) == [
        "y⏎",
        "^C",
        "(nothing typed: waits for output)",
        "export OPENAI_API_KEY=[REDACTED:openai_key]⏎",
    ]
    got = await items(client, ws)
    assert all(i["kind"] == "execute" for i in got if i.get("name") == "write_stdin")
