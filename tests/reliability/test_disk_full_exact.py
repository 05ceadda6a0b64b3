"""A full disk while a pushed session spills (issue 29, finding 8), under the real server on a
small tmpfs of its own.

A lone session spills when the memory budget shared by every log (`core/held_items.py`,
`DEFAULT_LIMIT` items) is exceeded: its oldest items go to the spill file until it holds three
quarters of the limit, well before its own window (`core/item_log.py`, 2,048 items) is reached.
The disk is filled just before the next trim, whose oldest items are 8 KB: more than a page, so
the spill write is what meets the full disk, while the journal's last page still has room for
the small lines sent one per request. A trim's spill is not reserved ahead (only spills past the
window are, `ItemLog.reserve`): the item it refuses stays whole in memory and its line is stored;
the server then refuses a line once the journal's last page is full.

What must hold, one test each: the refusal is 507 JSON `disk_full` with `first_unstored_line`;
every id still names its own item (`.N` is item N, never N+1); a spilled item's content comes
back whole, and so does an item whose spill was cut short; the full snapshot answers 200; and
after a restart the refused line is not there, so the client's resend stores it once. And the
search index, opened on a full disk, is kept for when there is room (not moved aside as if
damaged). (A spill past the window whose room the disk refuses is refused before the journal has
its line: tests/server/web/test_storage_errors.py.)
"""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sidemirror.core.held_items import DEFAULT_LIMIT, HeldItems
from sidemirror.core.item_log import DEFAULT_WINDOW
from sidemirror.index.search import SearchIndex
from sidemirror.index.search_tables import Doc

from tests.harness.auth import AUTH, NDJSON
from tests.harness.server import Server

from .report import record
from .small_fs import fill, small_fs
from .test_crash_restart import ws_id

WS_DIR = "/home/dev/full-spill"
SESSION = "spill"


class _ModelLog:
    """One log as the budget sees it: items held, the oldest spilled first."""

    def __init__(self) -> None:
        self.held = 0
        self.spilled = 0
        self.budget: HeldItems | None = None

    def spill_oldest(self, count: int = 1) -> int:
        assert self.budget is not None
        count = min(count, self.held)
        self.held -= count
        self.spilled += count
        self.budget.released(count)
        return count


def _trims() -> tuple[int, int]:
    """The server's own budget (`core/held_items.py`) replayed for one log: how many items its
    first trim spills (spread over the appends that follow it), and the item whose append starts
    the second trim."""
    starts: list[tuple[int, int]] = []  # (item, spilled so far) at each trim's start
    log = _ModelLog()

    class Watched(HeldItems):
        def _trim(self) -> None:
            starts.append((item, log.spilled))
            super()._trim()

    budget = log.budget = Watched()
    item = 0
    while len(starts) < 2:
        log.held += 1
        budget.added(log)
        item += 1
    (second_item, spilled_by_first) = starts[1]
    return spilled_by_first, second_item - 1


# Those spilled by the first trim are in the spill file when the disk fills.
SPILLED_BEFORE, SECOND_TRIM = _trims()
BIG = 100  # the oldest items held after it, so the next trim's: 8 KB each, more than a page
# Sent before the disk fills (at most 4 fewer when the journal needed fewer lines to keep room):
# the second trim then comes within the first lines on the full disk.
BEFORE_FILL = SECOND_TRIM
PAGE = 4096


def _words(n: int, size: int) -> str:
    """Item n's content: numbered words, so a cut or a neighbour's content shows."""
    text = f"item {n}:"
    k = 0
    while len(text) < size:
        text += f" w{n}-{k}"
        k += 1
    return text


def _content(n: int) -> str:
    if n < SPILLED_BEFORE:
        return _words(n, 300)
    if n < SPILLED_BEFORE + BIG:
        return _words(n, 8000)
    return _words(n, 60)


@dataclass
class Outcome:
    """What a client saw, from the full disk to the resend after a restart."""

    sent: list[str] = field(default_factory=list)  # contents, in order, acknowledged or not
    acked: int = 0  # how many of `sent` were acknowledged (a prefix)
    acked_at_fill: int = 0  # ... when the disk was filled
    spill_refused: bool = False  # the server said a spill was refused, before any line was
    refused: tuple[int, str, Any] | None = None  # status, content type, body
    journal_slack: int = 0  # room left in the journal's last page when a line was refused
    snapshot_full: tuple[int, Any] = (0, None)  # the full snapshot while the disk is full
    snapshot_freed: tuple[int, Any] = (0, None)  # once the disk has room, before a restart
    wrong_items: dict[str, Any] = field(default_factory=dict)  # id -> what it gave instead
    after_restart: list[str] = field(default_factory=list)
    after_resend: list[str] = field(default_factory=list)
    stderr: str = ""


def _request(server: Server, path: str, body: bytes | None = None) -> tuple[int, str, Any]:
    headers = NDJSON if body is not None else AUTH
    reply = server.exchange("POST" if body is not None else "GET", path, body, headers)
    return reply.status, reply.headers.get_content_type(), reply.json_or_text()


def _ingest(server: Server, contents: list[str]) -> tuple[int, str, Any]:
    body = "".join(json.dumps({"type": "assistant", "content": c}) + "\n" for c in contents)
    query = urllib.parse.urlencode({"workspace": WS_DIR, "session": SESSION})
    return _request(server, f"/api/ingest?{query}", body.encode())


def _snapshot(server: Server) -> tuple[int, Any]:
    path = f"/workspace/{ws_id(WS_DIR)}/session?session={SESSION}&limit=10000"
    status, _, body = _request(server, path)
    return status, body


def _contents(server: Server) -> list[str]:
    """The session's items' contents: the snapshot's, or the full item's where it was cut."""
    status, body = _snapshot(server)
    assert status == 200, body
    return [
        _full_item(server, item["id"])[1]
        if item.get("full_length", 0) > len(item["content"])
        else item["content"]
        for item in body["items"]
    ]


def _full_item(server: Server, item_id: str) -> tuple[int, Any]:
    path = f"/workspace/{ws_id(WS_DIR)}/session/items/{item_id}?session={SESSION}"
    status, _, body = _request(server, path)
    return status, body.get("content") if isinstance(body, dict) else body


def _journal(server: Server) -> Path:
    (path,) = (server.data / "ingest").glob("*/*.jsonl")
    return path


def _send(server: Server, out: Outcome, contents: list[str]) -> None:
    status, _, body = _ingest(server, contents)
    assert status == 200, body
    out.sent += contents
    out.acked = len(out.sent)


def _scenario(server: Server) -> Outcome:
    # The budget, not the log's own window (whose spills reserve room first), is what spills.
    assert DEFAULT_LIMIT < DEFAULT_WINDOW, (DEFAULT_LIMIT, DEFAULT_WINDOW)
    out = Outcome()
    server.start()
    total = BEFORE_FILL - 4
    for start in range(0, total, 500):
        _send(server, out, [_content(n) for n in range(start, min(start + 500, total))])
    # The journal's last page keeps room for the small lines sent on the full disk, so the
    # spill file (new 8 KB items, a new page each) meets the full disk first.
    for _ in range(4):
        slack = -_journal(server).stat().st_size % PAGE
        if slack >= 2048:
            break
        _send(server, out, [_words(len(out.sent), max(1, slack - 120))])
    server.wait_settled()  # its start-up writes must not land on the full disk
    filler = fill(server.data)
    out.acked_at_fill = out.acked
    for _ in range(BIG):
        line = _words(len(out.sent), 60)
        status, kind, body = _ingest(server, [line])
        out.sent.append(line)
        if status != 200:
            out.refused = (status, kind, body)
            out.journal_slack = -_journal(server).stat().st_size % PAGE
            out.spill_refused = "cannot spill to" in server.stderr()
            break
        out.acked = len(out.sent)
    out.snapshot_full = _snapshot(server)
    status, body = out.snapshot_full
    epoch = body["items"][0]["id"].rsplit(".", 1)[0] if status == 200 else None
    if epoch is None:  # the ids of an ingested log are <epoch>.1, .2, …: ask the journal
        epoch = json.loads(_journal(server).read_text().split("\n", 1)[0])["epoch"]
    checked = [*range(SPILLED_BEFORE + BIG + 2), DEFAULT_LIMIT, out.acked - 1]
    for n in checked:
        item_id = f"{epoch}.{n + 1}"
        got = _full_item(server, item_id)
        if got != (200, out.sent[n]):
            out.wrong_items[item_id] = got
    filler.unlink()
    out.snapshot_freed = _snapshot(server)
    server.stop()
    server.start()
    out.after_restart = _contents(server)
    # The client resends from `first_unstored_line`: here, the refused line itself.
    _ingest(server, out.sent[out.acked :])
    out.after_resend = _contents(server)
    out.stderr = server.stderr()
    return out


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    server = Server(tmp_path_factory.mktemp("full-spill"))
    with small_fs(server.data, 16 << 10):
        try:
            out = _scenario(server)
        finally:
            server.stop()
    record(
        "disk full: spill (tmpfs, 8 KB items spilling)",
        {
            "refused": out.refused and out.refused[:2],
            "journal_slack": out.journal_slack,
            "acked_on_full_disk": out.acked - out.acked_at_fill,
            "spill_refused": out.spill_refused,
            "snapshot_full": out.snapshot_full[0],
            "wrong_items": len(out.wrong_items),
            "duplicates_after_resend": len(out.after_resend) - len(set(out.after_resend)),
        },
        trials=1,
    )
    yield out


def test_the_refusal_is_507_json_with_first_unstored_line(outcome: Outcome) -> None:
    assert outcome.refused is not None, "the full disk never refused a line"
    # The spill file met the full disk first: the next trim (with item SECOND_TRIM's append)
    # came while the journal still had room, and its line was stored all the same.
    assert outcome.spill_refused, "no spill met the full disk before the refusal"
    trimmed_by = SECOND_TRIM + 1 - outcome.acked_at_fill
    assert outcome.acked - outcome.acked_at_fill >= trimmed_by, outcome.acked
    status, kind, body = outcome.refused
    assert (status, kind) == (507, "application/json"), outcome.refused
    assert body["error"]["code"] == "disk_full", body
    assert body["error"]["first_unstored_line"] == 0 == body["first_unstored_line"], body
    assert body["accepted"] == 0, body  # the top-level fields clients already read stay


def test_every_id_names_its_own_item_and_its_whole_content(outcome: Outcome) -> None:
    """`.N` is item N, and an 8 KB item whose spill the full disk cut short comes back whole
    (from memory, not cut mid-word), as does every item spilled before."""
    assert not outcome.wrong_items, {k: str(v)[:200] for k, v in outcome.wrong_items.items()}


def test_the_full_snapshot_answers_200_with_every_item(outcome: Outcome) -> None:
    for status, body in (outcome.snapshot_full, outcome.snapshot_freed):
        assert status == 200, str(body)[:500]
        labels = [item["content"].split(":", 1)[0] for item in body["items"]]
        assert labels == [f"item {n}" for n in range(outcome.acked)]


def test_a_refused_line_is_never_stored_so_a_resend_never_duplicates(outcome: Outcome) -> None:
    assert outcome.after_restart == outcome.sent[: outcome.acked]
    assert outcome.after_resend == outcome.sent
    assert "Traceback" not in outcome.stderr, outcome.stderr[-3000:]


def test_a_search_index_opened_on_a_full_disk_is_kept_and_opens_once_there_is_room(
    tmp_path: Path,
) -> None:
    """Opening the index needs room for its WAL files: a full disk refusing them is not a
    damaged index, so the file and its rows are kept (not moved aside to be rebuilt)."""
    data = tmp_path / "data"
    ts = "2026-12-02T02:50:00.000Z"
    with small_fs(data, 2048):
        index = SearchIndex(data)
        index.start()
        try:
            index.add_live([Doc("w" * 12, "s1", "e1", n, "assistant", ts, "keptword") for n in
                            range(1, 11)])  # fmt: skip
            assert index.wait_written(index.written(), timeout=30)
        finally:
            index.stop()
        filler = fill(data)
        again = SearchIndex(data)
        with pytest.raises(sqlite3.Error) as refused:
            again.start()
        # SQLITE_IOERR or SQLITE_FULL: the disk's error, not a damaged file's
        assert refused.value.sqlite_errorcode & 0xFF in (10, 13), refused.value
        assert not list(data.glob("*.corrupt")), "the index was moved aside"
        filler.unlink()
        again.start()
        try:
            assert sorted(hit.seq for hit in again.search("keptword", limit=100)) == list(
                range(1, 11)
            )
        finally:
            again.stop()
