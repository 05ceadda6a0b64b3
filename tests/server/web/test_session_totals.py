"""`GET /workspace/{ws}/sessions` gives each session's totals: turns, tokens by kind and cost,
equal to the sum of its `turn_complete` items, on a real server reading real transcripts.

The sums compared against are of a plain parse of the file (tests/transcripts.py), not of
anything the server computed. Sessions are checked before anyone opens them (the search
index's read), after a restart (kept with the index), after they are opened, as a file grows,
and for a transcript so big that the server reads it from near its end.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sidemirror.core.models import TurnCompleteEvent
from sidemirror.sources.claude.sync import TAIL_FROM_BYTES

from tests.harness.paths import FIXTURES
from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.transcripts import positional_parse, rerun, write_long_session

SAMPLE = FIXTURES / "claude" / "sample-project"
BIG_SOURCE = SAMPLE / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
TIMEOUT = 120.0  # the search index opens after the listing, and reads in the background


def expected(path: Path) -> dict[str, Any]:
    """What the listing must say: sums over the file's `turn_complete` items."""
    turns = [i for i in positional_parse(path.read_bytes()) if isinstance(i, TurnCompleteEvent)]
    costs = [t.cost_usd for t in turns if t.cost_usd is not None]
    return {
        "turns": len(turns),
        "cost_usd": round(sum(costs), 6) if costs else None,
        "tokens": {
            "input": sum(t.input_tokens for t in turns),
            "output": sum(t.output_tokens for t in turns),
            "cache_read": sum(t.cache_read_tokens for t in turns),
            "cache_write": sum(t.cache_write_tokens for t in turns),
        },
    }


def listed(server: Server) -> dict[str, dict[str, Any]]:
    """Every session listed, by id: its totals and whether it is loaded (`items`)."""
    out = {}
    for ws in server.workspaces():
        for s in server.get(f"/workspace/{ws['id']}/sessions")["sessions"]:
            out[s["id"]] = s
    return out


def totals_of(session: dict[str, Any]) -> dict[str, Any]:
    return {k: session[k] for k in ("turns", "cost_usd", "tokens")}


def wait_totals(server: Server, want: dict[str, dict[str, Any]], what: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        sessions = listed(server)
        got = {sid: totals_of(sessions[sid]) for sid in want if sid in sessions}
        return sessions if got == want else None

    return wait_until(check, TIMEOUT, what=what)


def copy_sample(claude: Path) -> dict[str, Path]:
    project = claude / "-path-to-sample"
    project.mkdir(parents=True)
    files = {}
    for path in sorted(SAMPLE.glob("*.jsonl")):
        files[path.stem] = Path(shutil.copy(path, project / path.name))
    return files


def test_totals_are_the_sum_of_the_turns_before_and_after_a_read_and_a_restart(
    tmp_path: Path,
) -> None:
    claude = tmp_path / "claude"
    files = copy_sample(claude)
    want = {sid: expected(path) for sid, path in files.items()}
    assert any(w["turns"] and w["cost_usd"] for w in want.values())  # a real check
    with Server(tmp_path, claude_dir=claude) as server:
        sessions = wait_totals(server, want, "totals read by the search index")
        assert all(sessions[sid]["items"] is None for sid in want)  # nobody opened them
        # Every workspace's sessions in one answer: the same, each with its workspace's id.
        everything = server.get("/api/sessions")
        assert [w["id"] for w in everything["workspaces"]] == [w["id"] for w in server.workspaces()]
        ws_id = everything["workspaces"][0]["id"]
        assert {s["id"]: s for s in everything["sessions"]} == {
            sid: {**s, "workspace": ws_id} for sid, s in sessions.items()
        }
        assert server.exchange("GET", "/api/sessions").status == 401  # no token
    with Server(tmp_path, claude_dir=claude) as server:
        wait_totals(server, want, "totals kept across a restart")
        ws = server.workspaces()[0]["id"]
        for sid in files:
            server.snapshot(ws, sid)  # opened: the store holds and counts its items
        sessions = wait_totals(server, want, "totals after the sessions were opened")
        assert all(sessions[sid]["items"] for sid in want)
        # The file grows by a whole run of the session: its turns are added as they arrive.
        grown = files[BIG_SOURCE.stem]
        with grown.open("ab") as fh:
            fh.write(rerun(BIG_SOURCE.read_bytes(), 1, BIG_SOURCE.stem))
        want[grown.stem] = expected(grown)
        wait_totals(server, want, "totals after the file grew")


def test_a_huge_transcripts_totals_count_the_part_never_parsed(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    project = claude / "-path-to-big"
    project.mkdir(parents=True)
    big = project / BIG_SOURCE.name
    write_long_session(big, BIG_SOURCE, TAIL_FROM_BYTES + (2 << 20))
    want = {big.stem: expected(big)}
    with Server(tmp_path, claude_dir=claude) as server:
        wait_totals(server, want, "a huge session's totals")
        ws = server.workspaces()[0]["id"]
        snap = server.snapshot(ws, big.stem, limit=10)
        assert snap["skipped_bytes"] > 0  # read from near its end, so the tail alone is held
        wait_totals(server, want, "a huge session's totals once opened")
        with big.open("ab") as fh:
            fh.write(rerun(BIG_SOURCE.read_bytes(), 99, BIG_SOURCE.stem))
        want[big.stem] = expected(big)
        wait_totals(server, want, "a huge session's totals after it grew")
