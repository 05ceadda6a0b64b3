"""Nothing a client puts in a URL or a header makes the server answer 500.

Every route the app registers, with random path segments, every query parameter any route reads
and a random `Last-Event-ID`: the answer is a 2xx or a 4xx with the JSON error body, never a
500 and never a stream that dies after its headers.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sidemirror.app import create_app, routes

from tests.harness.auth import AUTH
from tests.server.support import make_settings

PARAMS = ("limit", "session", "workspace", "last_event_id", "ticket", "url", "format", "nonce")
# Unicode digits and other lookalikes first: "²".isdigit() is true, int("²") raises.
NASTY = st.sampled_from(["²", "٣", "1²", "-1", "0", "10001", "1e3", " 5", "5 ", "a.²", ".", ""])
VALUE = st.one_of(NASTY, st.text(max_size=40), st.from_regex(r"[0-9a-f]{8}\.[0-9²٣]{1,4}"))
# Header values a client can send at all: visible Latin-1 (HTTP clients refuse control bytes).
HEADER = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_categories=["Cc"]),
    max_size=40,
)


def _path(template: str, segment: str) -> str:
    out = template
    for name in ("{ws}", "{item_id}"):
        out = out.replace(name, segment or "x")
    return out


async def _probe(client: Any, method: str, path: str, query: dict[str, str], last_id: str) -> int:
    headers = {**AUTH, "Last-Event-ID": last_id}
    if method == "POST":
        headers["Content-Type"] = "application/json"
    async with client.request(method, path, params=query, headers=headers, data=b"{}") as resp:
        if resp.status == 200 and resp.headers.get("Content-Type", "").startswith(
            "text/event-stream"
        ):
            # A stream that accepted the request must get as far as its first message.
            first = await resp.content.readuntil(b"\n\n")
            assert first.startswith(b"retry:"), first
        return resp.status


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    segment=st.one_of(
        NASTY, st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)
    ),
    query=st.dictionaries(st.sampled_from(PARAMS), VALUE, max_size=4),
    last_id=HEADER,
)
async def test_no_route_answers_500(
    aiohttp_client: Any, tmp_path_factory: Any, segment: str, query: dict[str, str], last_id: str
) -> None:
    app = create_app(make_settings(tmp_path_factory.mktemp("fuzz")), AUTH["Authorization"][7:])
    client = await aiohttp_client(app)
    for route in routes():
        if route.method == "GET" and route.path.endswith("/ws"):
            continue  # WebSocket upgrades: their query parsing is checked on the POST twins
        status = await _probe(client, route.method, _path(route.path, segment), query, last_id)
        assert status < 500, (route.method, route.path, segment, query, last_id, status)
    await client.close()
