"""A rewind appended to a transcript the server tails: the live rewind line equals a whole read's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sidemirror.core.hub import ItemsPublished, session_topic
from sidemirror.core.models import SystemEvent

from tests.server.sources.claude.running import session_loaded
from tests.transcripts import positional_parse
from tests.unit.sources.claude.test_branches import TOOL_HEAVY, lines, rewind_lines


async def test_a_live_rewind_marks_the_same_items_as_a_whole_read(tmp_path: Path) -> None:
    base = lines(TOOL_HEAVY)
    sid, cwd = base[3]["sessionId"], base[3]["cwd"]
    main = tmp_path / "projects" / "p" / f"{sid}.jsonl"
    main.parent.mkdir(parents=True)
    main.write_bytes(TOOL_HEAVY.read_bytes())
    async with session_loaded(tmp_path, cwd, sid) as (store, log):
        sub = store.hub.subscribe(session_topic(log.workspace_id, sid))
        with open(main, "a") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rewind_lines(base, compact_after=False)))
        live = None
        while live is None:
            message = await asyncio.wait_for(sub.get(), 10)
            items = message.items if isinstance(message, ItemsPublished) else ()
            rewinds = [i for i in items if isinstance(i, SystemEvent) and i.subtype == "rewind"]
            live = rewinds[0] if rewinds else None
        [whole] = [
            i
            for i in positional_parse(main.read_bytes())
            if isinstance(i, SystemEvent) and i.subtype == "rewind"
        ]
        assert (live.seq, live.abandoned_after, live.content) == (
            whole.seq,
            whole.abandoned_after,
            whole.content,
        )
        # The abandoned items are the ones the panel already shows, by their ids.
        shown = [i.seq for i in log.items if live.abandoned_after < i.seq < live.seq]
        assert len(shown) > 10
