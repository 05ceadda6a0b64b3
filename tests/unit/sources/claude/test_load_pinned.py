"""Item ids are positions in a deterministic parse: pin what a load of each fixture
session gives, so a faster load (streamed, chunked, other decoder) cannot shift an id unnoticed.

The digests cover every item (all fields but id/seq, in order: the seq is the position), the
merge journal (file runs and their end offsets) and the session metadata. They were taken from
the whole-file load that came before the streamed one. If a parser change alters items on
purpose, update them (and expect clients' cursors to reset across that upgrade). Turns'
`subagent_tokens`/`subagent_cost_usd` and titles from a summary of another session (dropped)
changed them before; a `turn_duration` item after turn-2's last turn (the agent's own figure
for it) last: one item more at the end, no other field, no id moved.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sidemirror.core.hub import Hub
from sidemirror.core.models import SessionItem
from sidemirror.core.projection import Projector
from sidemirror.core.store import ParseProblem, Store
from sidemirror.sources.claude.session import ClaudeSession
from sidemirror.sources.files.tailer import JsonlTailer, TailBatch

from tests.harness.paths import FIXTURES as FIXTURE_ROOT

FIXTURES = FIXTURE_ROOT / "claude"
PINNED = {  # name: (main file, items, journal entries, digest)
    "flat": ("flat-agents/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl", 22, 6, "e98944540250faa3"),
    "turn-1": ("incremental-subagents/turn-1.jsonl", 67, 3, "16ffc8b7c9422504"),
    "turn-2": ("incremental-subagents/turn-2.jsonl", 91, 3, "b8944887894c626a"),
    "init": (
        "sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        26,
        1,
        "6b3050e69836d746",
    ),
    "orchestrator": (
        "sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        47,
        1,
        "5916f366594c4787",
    ),
    "todo-app": (
        "sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        418,
        1,
        "df6bf10329b0b989",
    ),
}


def agent_files(main: Path) -> dict[str, Path]:
    found = sorted(main.parent.glob("agent-*.jsonl"))
    found += sorted(main.with_suffix("").glob("subagents/agent-*.jsonl"))
    return {p.stem[len("agent-") :]: p for p in found}


def session(main: Path, journal: Path) -> ClaudeSession:
    store = Store(Hub(), Projector())
    ws = store.ensure_workspace("/x", "claude")
    s = ClaudeSession(store, store.ensure_session(ws, "s", "claude", "e0"), main, journal)
    for key, path in agent_files(main).items():
        s.add_agent(key, path)
    return s


def digest(s: ClaudeSession, items: list[SessionItem], problems: list[ParseProblem]) -> str:
    errors = len(problems)
    h = hashlib.sha256()
    for item in items:
        fields = item.model_dump(mode="json", exclude={"id", "seq"})
        h.update(json.dumps(fields, sort_keys=True).encode() + b"\n")
    entries = [(e.key, e.end) for e in s.journal.entries]
    p = s.parser
    meta = [p.title, p.first_prompt, p.started_at, p.git_branch, p.cwd, errors]
    h.update(json.dumps([entries, meta]).encode())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(PINNED))
@pytest.mark.parametrize("chunk", [None, 997])
def test_load_gives_the_pinned_items(
    name: str, chunk: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if chunk is not None:  # tiny reads: lines split across chunks everywhere
        monkeypatch.setattr(ClaudeSession, "_chunk_bytes", lambda self: chunk)
    rel, n_items, n_entries, pinned = PINNED[name]
    first = session(FIXTURES / rel, tmp_path / "journals")
    epoch, items, errors = first._build()
    assert (len(items), len(first.journal.entries)) == (n_items, n_entries)
    assert digest(first, items, errors) == pinned
    # A restart replays the journal it wrote: same epoch, same items, hence same ids.
    again = session(FIXTURES / rel, tmp_path / "journals")
    epoch2, items2, errors2 = again._build()
    assert epoch2 == epoch
    assert digest(again, items2, errors2) == pinned


def test_stream_decodes_lazily_a_chunk_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(b'{"n": %d}\n' % i for i in range(1000)))
    tailer = JsonlTailer(path)
    batch = TailBatch()
    stream = tailer.stream(batch, chunk_bytes=100)
    assert next(stream) == (9, {"n": 0})
    assert tailer.offset == 9  # nothing beyond the first line has been decoded yet
    rest = list(stream)
    assert len(rest) == 999 and rest[-1][1] == {"n": 999}
    assert batch.offset == tailer.offset == path.stat().st_size
    assert batch.records == [] and batch.errors == 0
