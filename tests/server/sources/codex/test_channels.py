"""A Codex prompt and reply written to both channels show once even where the two texts differ,
and the context Codex injects never shows as a prompt: what the panel receives over HTTP.

The rollout is a real Codex Desktop 0.104 recording (tests/fixtures/codex/localpush/), written
to a watched folder in two steps while the server follows it. Its sanitiser replaced each text
with a placeholder naming its channel (`[REDACTED_TEXT …]` in items, `[REDACTED_MESSAGE …]` in
events), so every prompt and reply's two copies differ there; it also stripped the tags off the
injected context. `test_tagged_context_is_not_shown` puts the tags back: the two injected user
items, recorded lines 3 and 4, with their text changed to the blocks Codex writes there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness.paths import FIXTURES
from tests.server.sources.test_removed_files import _json, _until, _workspaces
from tests.server.support import ClientFactory

ROLLOUT = (
    FIXTURES
    / "codex"
    / "localpush"
    / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
)
RECORDS = [json.loads(line) for line in ROLLOUT.read_text().splitlines()]
SESSION = RECORDS[0]["payload"]["id"]
PROMPT_ITEM = 8  # the prompt's user item; its `user_message` event is line 9
PROMPT = RECORDS[9]["payload"]["message"]
AGENTS_MD = (
    "# AGENTS.md instructions for /redacted/path/ea96e59ed9\n\n<INSTRUCTIONS>\n"
    "Run the tests before you commit.\n</INSTRUCTIONS>"
)
ENVIRONMENT = (
    "<environment_context>\n  <cwd>/redacted/path/ea96e59ed9</cwd>\n"
    "  <shell>zsh</shell>\n</environment_context>"
)


def count(records: list[dict[str, Any]], kind: str, sub: str, role: str | None = None) -> int:
    return sum(
        1
        for r in records
        if r["type"] == kind
        and r["payload"].get("type") == sub
        and (role is None or r["payload"].get("role") == role)
    )


async def follow_in_two_steps(
    make_client: ClientFactory, tmp_path: Path, records: list[dict[str, Any]]
) -> tuple[Any, str, list[dict[str, Any]]]:
    """The rollout up to the prompt's user item, then the rest appended: the whole session as
    the panel receives it once its turn has closed."""
    day = tmp_path / "codex" / "sessions" / "2026" / "02" / "23"
    day.mkdir(parents=True)
    rollout = day / ROLLOUT.name
    lines = [json.dumps(r) + "\n" for r in records]
    rollout.write_text("".join(lines[: PROMPT_ITEM + 1]))
    client = await make_client(codex_dir=tmp_path / "codex")
    (ws,) = await _until(lambda: _workspaces(client))
    url = f"/workspace/{ws['id']}/session?session={SESSION}&limit=1000"

    async def listed() -> bool:
        sessions = (await _json(client, f"/workspace/{ws['id']}/sessions"))["sessions"]
        return any(s["id"] == SESSION for s in sessions)

    await _until(listed)
    with rollout.open("a") as fh:
        fh.write("".join(lines[PROMPT_ITEM + 1 :]))

    async def closed() -> list[dict[str, Any]]:
        got = list((await _json(client, url))["items"])
        return got if got and got[-1]["type"] == "turn_complete" else []

    return client, ws["id"], await _until(closed)


async def test_prompt_and_replies_show_once_though_their_copies_differ(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    _client, _ws, got = await follow_in_two_steps(make_client, tmp_path, RECORDS)
    types = [i["type"] for i in got]
    # One prompt, as the UI showed it (the event's copy); one turn, with its tokens.
    assert [i["content"] for i in got if i["type"] == "user"] == [PROMPT]
    (turn,) = [i for i in got if i["type"] == "turn_complete"]
    assert turn["input_tokens"] > 0 and turn["output_tokens"] > 0 and turn["status"] == "ok"
    # Each reply and reasoning summary once, however its two copies read.
    replies = count(RECORDS, "response_item", "message", "assistant")
    assert types.count("assistant") == replies == count(RECORDS, "event_msg", "agent_message")
    assert types.count("thinking") == count(RECORDS, "event_msg", "agent_reasoning")
    # The two injected user items before the prompt (their tags stripped by the sanitiser) are
    # shown as context, before the prompt, never as prompts.
    context = [i for i in got if i["type"] == "system" and i["subtype"] == "context"]
    assert [c["content"] for c in context] == [
        RECORDS[3]["payload"]["content"][0]["text"],
        RECORDS[4]["payload"]["content"][0]["text"],
    ]
    assert types.index("user") > max(got.index(c) for c in context)


async def test_tagged_context_is_not_shown_and_the_event_may_come_first(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    records = json.loads(json.dumps(RECORDS))
    records[3]["payload"]["content"][0]["text"] = AGENTS_MD  # changed: the text, re-tagged
    records[4]["payload"]["content"][0]["text"] = ENVIRONMENT
    # The event before its item (Codex writes either first): swap the recorded lines 8 and 9,
    # so the first step ends on the event.
    records[PROMPT_ITEM], records[PROMPT_ITEM + 1] = records[PROMPT_ITEM + 1], records[PROMPT_ITEM]
    client, ws, got = await follow_in_two_steps(make_client, tmp_path, records)
    assert [i["type"] for i in got if i["type"] in ("user", "system")] == ["user"]
    assert [i["content"] for i in got if i["type"] == "user"] == [PROMPT]
    assert sum(i["type"] == "turn_complete" for i in got) == 1
    sessions = (await _json(client, f"/workspace/{ws}/sessions"))["sessions"]
    assert [s["title"] for s in sessions if s["id"] == SESSION] == [PROMPT]
