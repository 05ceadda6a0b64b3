"""A TaskCreate/TaskUpdate transcript tailed live and across a restart: the plan stays whole."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sidemirror.core.hub import ItemsPublished, session_topic
from sidemirror.core.models import PlanEvent
from sidemirror.core.store import SessionLog

from tests.harness.paths import FIXTURES
from tests.unit.sources.claude.test_task_plan import EXPECTED, TASKS

from .running import started

SID = TASKS.stem
CWD = "/home/dev/project"


def plans(log: SessionLog) -> list[list[tuple[str, str]]]:
    return [
        [(e.content, e.status) for e in i.entries] for i in log.items if isinstance(i, PlanEvent)
    ]


async def wait_for_plans(log: SessionLog, count: int) -> None:
    for _ in range(500):
        if len(plans(log)) >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{len(plans(log))} plans, wanted {count}")


async def test_the_plan_survives_a_restart_and_keeps_changing_live(tmp_path: Path) -> None:
    assert FIXTURES in TASKS.parents
    lines = TASKS.read_text().splitlines(keepends=True)
    main = tmp_path / "projects" / "-home-dev-project" / f"{SID}.jsonl"
    main.parent.mkdir(parents=True)
    main.write_text("".join(lines[:8]))  # the prompt and two creates

    _, source, log = await started(tmp_path, CWD, SID)
    try:
        await wait_for_plans(log, 2)
        with open(main, "a") as fh:  # the third create arrives live
            fh.write("".join(lines[8:10]))
        await wait_for_plans(log, 3)
        assert plans(log) == EXPECTED[:3]
    finally:
        await source.stop()

    with open(main, "a") as fh:  # the rest is written while the server is down
        fh.write("".join(lines[10:]))
    _, source, log = await started(tmp_path, CWD, SID)
    try:
        await wait_for_plans(log, len(EXPECTED))
        assert plans(log) == EXPECTED
        sub = source.store.hub.subscribe(session_topic(log.workspace_id, SID))
        last = json.loads(lines[-1])
        call = {"type": "tool_use", "id": "toolu_after_restart", "name": "TaskUpdate"}
        call["input"] = {"taskId": "1", "status": "in_progress"}
        record = {
            "type": "assistant",
            "uuid": "after-restart",
            "parentUuid": last["uuid"],
            "timestamp": last["timestamp"],
            "sessionId": SID,
            "cwd": CWD,
            "message": {"role": "assistant", "content": [call]},
        }
        with open(main, "a") as fh:
            fh.write(json.dumps(record) + "\n")
        item = None
        while not isinstance(item, PlanEvent):
            message = await asyncio.wait_for(sub.get(), 10)
            items = message.items if isinstance(message, ItemsPublished) else ()
            item = next((i for i in items if isinstance(i, PlanEvent)), None)
        assert [(e.content, e.status) for e in item.entries] == [
            ("Read the signup form", "in_progress"),
            ("Add email and password validation", "completed"),
        ]
    finally:
        await source.stop()
