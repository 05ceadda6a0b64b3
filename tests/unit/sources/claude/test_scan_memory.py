"""A scan (the search backfill's read of a session nobody opened) keeps nothing of its parse:
over an archive of thousands of sessions that was ~65 KB each. A load after it still gives the
items the scan gave, under the same epoch (the merge journal it wrote)."""

from __future__ import annotations

import asyncio
import gc
import shutil
import tracemalloc
from pathlib import Path

from sidemirror.core.hub import Hub
from sidemirror.core.models import SessionItem
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store
from sidemirror.sources.claude.session import ClaudeSession

from tests.harness.paths import FIXTURES

TODO = FIXTURES / "claude/sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"


def sessions(tmp_path: Path, n: int) -> tuple[Store, list[ClaudeSession]]:
    store = Store(Hub(), Projector())
    ws = store.ensure_workspace("/x", "claude")
    made = []
    for i in range(n):
        main = tmp_path / f"s{i}.jsonl"
        shutil.copyfile(TODO, main)
        log = store.ensure_session(ws, f"s{i}", "claude", "e0")
        made.append(ClaudeSession(store, log, main, tmp_path / "journals"))
    return store, made


def test_a_scan_keeps_no_parse_state_and_a_load_after_it_gives_the_same_items(
    tmp_path: Path,
) -> None:
    store, scanned = sessions(tmp_path, 16)
    first_scan: list[tuple[str, list[tuple[int, str]]]] = []  # the first session's items

    def sink(epoch: str, items: list[SessionItem]) -> None:
        if not first_scan:
            first_scan.append((epoch, [(item.seq, item.type) for item in items]))

    async def scan(some: list[ClaudeSession]) -> None:
        for s in some:
            assert await s.scan(sink)

    asyncio.run(scan(scanned[:8]))  # caches filled (the JSON decoder's strings: bounded)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        asyncio.run(scan(scanned[8:]))
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    # The fixture is 774 KB; its parse state was 65–100 KB a session.
    assert grown / 8 < 10_000, grown

    first = scanned[0]
    ((epoch, items),) = first_scan
    asyncio.run(first.load())
    assert first.log.epoch == epoch
    assert [(i.seq, i.type) for i in first.log.items] == items
    assert first.parser.first_prompt  # a load parses afresh
