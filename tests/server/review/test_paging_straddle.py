"""Paging back through a transcript just over the size read from near its end, where tool calls
made before the prompt the read starts from are answered after it.

Claude Code writes a prompt the user sends while tools run (a queued message) before those
tools' results. A parse that starts at that prompt has not seen the calls; their results must
still carry the calls' names and durations, and a TodoWrite's routine result must still show
nothing, exactly as a parse from byte 0 gives them. The lines are real ones of the recorded
session (sample-project/fe5e1c67…) with fresh ids.
"""

from __future__ import annotations

import json
from pathlib import Path

from sidemirror.core.jsonline import decode_line
from sidemirror.sources.claude.positions import last_seq_of_line
from sidemirror.sources.claude.sync import TAIL_FROM_BYTES, TAIL_KEEP_BYTES, is_prompt

from tests.harness.auth import AUTH
from tests.server.review.test_paging import get
from tests.server.sources.claude.test_tail_load import SESSION, SID, dump, wait_listed, whole_parse
from tests.server.support import ClientFactory, state_of
from tests.transcripts import rerun, write_long_session

LINES = SESSION.read_bytes().split(b"\n")
TODO_CALL, TODO_RESULT, PROMPT = (json.loads(LINES[n]) for n in (9, 10, 433))


def straddling_lines(after_uuid: str) -> bytes:
    """A TodoWrite and a Bash call, a prompt sent while they run, then their results."""
    todo = json.loads(json.dumps(TODO_CALL))
    todo["message"]["content"][0]["id"] = "toolu_straddleTodo"
    bash = json.loads(json.dumps(TODO_CALL))
    bash["message"]["id"] = "msg_straddleBash"
    bash["message"]["content"][0] = {
        "type": "tool_use", "id": "toolu_straddleBash", "name": "Bash",
        "input": {"command": "npm run build", "description": "Build the app"},
    }  # fmt: skip
    prompt = dict(PROMPT, message={"role": "user", "content": "Also check the lint output"})
    todo_done = json.loads(json.dumps(TODO_RESULT))
    todo_done["message"]["content"][0]["tool_use_id"] = "toolu_straddleTodo"
    bash_done = json.loads(json.dumps(TODO_RESULT))
    bash_done.pop("toolUseResult")
    bash_done["message"]["content"] = [
        {"tool_use_id": "toolu_straddleBash", "type": "tool_result", "content": "built in 41s"}
    ]
    records = [todo, bash, prompt, todo_done, bash_done]
    for n, record in enumerate(records):
        record["parentUuid"] = after_uuid
        record["uuid"] = after_uuid = f"5717add1-0000-4000-8000-{n:012d}"
        record["timestamp"] = f"2025-09-03T02:00:0{n}.000Z"
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


def no_prompts(data: bytes) -> bytes:
    kept = []
    for line in data.split(b"\n")[:-1]:
        ok, record = decode_line(line)
        if not (ok and isinstance(record, dict) and is_prompt(record)):
            kept.append(line + b"\n")
    return b"".join(kept)


async def test_calls_answered_after_the_prompt_a_read_starts_from_keep_their_names(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "-path-to-Demo"
    project.mkdir(parents=True)
    path = project / SESSION.name
    write_long_session(path, SESSION, TAIL_FROM_BYTES + 1)  # just over the size
    last = json.loads(path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[1])
    with path.open("ab") as fh:
        fh.write(straddling_lines(last["uuid"]))
    data = path.read_bytes()
    prompt_end = data.index(b"Also check the lint output")
    prompt_end = data.index(b"\n", prompt_end) + 1
    # The rest of the turn: more of the session's own lines (none a prompt), enough that the
    # read starts at the prompt above.
    filler = no_prompts(rerun(SESSION.read_bytes(), 999, SID))
    assert len(filler) > TAIL_KEEP_BYTES
    with path.open("ab") as fh:
        fh.write(filler)

    client = await make_client(claude_dirs=[tmp_path / "projects"])
    await wait_listed(client)
    ws = (await (await client.get("/api/workspaces", headers=AUTH)).json())["workspaces"][0]
    route = f"/workspace/{ws['id']}/session"
    status, snap = await get(client, route, session=SID, limit="300")
    assert status == 200 and snap["skipped_bytes"] == prompt_end  # read from that prompt
    pages = [snap["items"]]
    has_more = True
    while has_more:
        status, page = await get(client, route, session=SID, before=pages[-1][0]["id"], limit="500")
        assert status == 200 and page["items"], page
        pages.append(page["items"])
        has_more = page["has_more"]
    got = [item for page in reversed(pages) for item in page]

    projector = state_of(client).store.projector
    whole = [json.loads(projector.to_json(i)) for i in whole_parse(path)]
    assert [dump(i) for i in got] == [dump(i) for i in whole]
    # The results are among the items read first (past the prompt), named from their calls.
    results = {i["tool_use_id"]: i for i in got if i["type"] == "tool_result"}
    bash = results["toolu_straddleBash"]
    assert bash["seq"] > last_seq_of_line(prompt_end)
    assert (bash["name"], bash["duration_ms"]) == ("Bash", 3000)
    assert "toolu_straddleTodo" not in results  # a routine TodoWrite result shows nothing
    await client.close()
