"""Search is literal by default: what the user types is found as typed (punctuation, paths,
`tech-spec`, quotes, parentheses, AND/OR/NEAR), every word also as a prefix; answers carry
`total` and each hit's `matches` (UTF-16 offsets into its snippet). FTS5 syntax only with
`syntax=fts`. No input, of thousands of hostile ones, answers 500."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH
from tests.server.review.test_search import search_when_open
from tests.server.support import ClientFactory, ingest

LINES = [
    "the tech-spec for the widget is done",
    "installed to /usr/local/bin/sidemirror today",
    'he said "hello there" and left',
    "compute f(x) AND g(y) OR NOT h",
    "NEAR the river, q=* means every query",
    "🎉🎉 party time with ünïcödé words",
    "zebra one",
    "zebra two",
    "zebra three",
]


def highlighted(hit: dict[str, Any]) -> list[str]:
    """What the panel would highlight: each match's UTF-16 span of the snippet."""
    units = hit["snippet"].encode("utf-16-le")
    return [units[2 * s : 2 * e].decode("utf-16-le") for s, e in hit["matches"]]


async def search(client: Any, q: str, **params: str) -> tuple[int, dict[str, Any]]:
    return await search_when_open(client, "/api/search", q=q, **params)


async def found(client: Any, q: str) -> list[str]:
    status, body = await search(client, q)
    assert status == 200, (q, body)
    assert body["total"] == len(body["hits"]), body
    return [hit["snippet"] for hit in body["hits"]]


async def test_what_is_typed_is_found_literally(make_client: ClientFactory, tmp_path: Path) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": line} for line in LINES])
    assert await found(client, "tech-spec") == [LINES[0]]
    assert await found(client, "/usr/local/bin") == [LINES[1]]
    assert await found(client, '"hello') == [LINES[2]]
    assert await found(client, "f(x) AND g(y)") == [LINES[3]]
    assert await found(client, "NEAR") == [LINES[4]]
    assert await found(client, "q=*") == [LINES[4]]
    assert await found(client, "sidemir") == [LINES[1]]  # a prefix
    assert await found(client, "unicode") == [LINES[5]]  # accents ignored
    assert await found(client, "tech-spec widget nowhere") == []  # every word must match
    for blank in ("", "   ", "*", "()"):
        assert await search(client, blank) == (200, {"hits": [], "total": 0})

    # FTS5 syntax when asked for: an operator works, and a malformed query is a 400.
    status, body = await search(client, "zebra NOT two", syntax="fts")
    assert status == 200 and {h["snippet"] for h in body["hits"]} == {"zebra one", "zebra three"}
    status, body = await search(client, "f(x", syntax="fts")
    assert status == 400 and body["error"]["code"] == "bad_query"
    await client.close()


async def test_total_and_match_positions(make_client: ClientFactory, tmp_path: Path) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": line} for line in LINES])
    status, body = await search(client, "zebra", limit="1")
    assert status == 200 and len(body["hits"]) == 1 and body["total"] == 3
    status, body = await search(client, "tech-spec")
    assert highlighted(body["hits"][0]) == ["tech-spec"]  # the phrase, one span
    status, body = await search(client, "part")  # after two emoji: UTF-16 offsets
    (hit,) = body["hits"]
    assert hit["matches"] == [[5, 10]] and highlighted(hit) == ["party"]
    await client.close()


NASTY = ['"', "'", "(", ")", "*", "^", ":", "-", "+", "NEAR", "NEAR(", "AND", "OR", "NOT", "{",
         "}", "\x00", "\\", "/usr/local", "tech-spec", "q=*", "🎉", "e\u0301", "body:", "\t", " ",
         "zebra", "%", "_", "[", "]", ",", ";", "\u200b", "\ufeff", "\U0010fffd", "a" * 300]  # fmt: skip


def hostile(rng: random.Random) -> str:
    parts = [rng.choice(NASTY) if rng.random() < 0.7 else chr(rng.randrange(1, 0xD7FF))
             for _ in range(rng.randrange(1, 12))]  # fmt: skip
    return "".join(p + (" " if rng.random() < 0.5 else "") for p in parts)


async def test_no_input_answers_500(make_client: ClientFactory, tmp_path: Path) -> None:
    client = await make_client()
    await ingest(client, [{"type": "user", "content": line} for line in LINES])
    await search(client, "zebra")  # the index is open
    rng = random.Random(29)
    statuses: dict[tuple[str, int], int] = {}
    for _ in range(1500):
        q = hostile(rng)
        for syntax in ("literal", "fts"):
            resp = await client.get("/api/search", params={"q": q, "syntax": syntax},
                                    headers=AUTH)  # fmt: skip
            body = await resp.json()
            key = (syntax, resp.status)
            statuses[key] = statuses.get(key, 0) + 1
            assert resp.status in (200, 400), (syntax, q, resp.status, body)
            if syntax == "literal":
                assert resp.status == 200, (q, body)
            if resp.status == 200:
                for hit in body["hits"]:
                    width = len(hit["snippet"].encode("utf-16-le")) // 2
                    assert all(0 <= s < e <= width for s, e in hit["matches"]), hit
    assert statuses[("fts", 400)] > 100 and statuses[("literal", 200)] == 1500, statuses
    await client.close()
