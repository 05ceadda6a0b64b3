"""browser-link against a real browser: Debian's Chromium with `--remote-debugging-port`, watched
by `observe-cdp`, while a Claude transcript records a Playwright MCP call. What the page does
during the call (a failing POST, an uncaught error) is linked to that call; what it does after
the call's result is not."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from sidemirror.clients.observe_cdp import observe
from sidemirror.core.clock import now_iso
from sidemirror.runtime_file import write_runtime_file

from tests.harness.auth import AUTH, TOKEN
from tests.harness.waiting import until
from tests.server.clients.test_observe_cdp import CHROMIUM, cdp_call
from tests.server.clients.test_observe_cdp import chromium as chromium  # the fixture
from tests.server.helpers.browser_session import record as session_record
from tests.server.sse import SSEReader
from tests.server.support import ClientFactory

CWD = "/home/dev/checkout"
SESSION = "9d1f3a6e-2c4b-4e8f-b0a7-5e6d7c8b9a01"
CALL_ID = "toolu_01CdpLinkClick0000000001"

PAGE = """<!doctype html><link rel="icon" href="data:,"><title>checkout</title><script>
function save() { return fetch("/api/session", {method: "POST"}).catch(() => {}); }
function render() { throw new Error("theme is not defined"); }
</script>"""


async def app_server() -> TestServer:
    async def page(_: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def session(_: web.Request) -> web.Response:
        return web.Response(status=500, text="database down")

    app = web.Application()
    app.router.add_get("/app", page)
    app.router.add_post("/api/session", session)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


def record(kind: str, content: Any, ts: str, n: int) -> str:
    return session_record(kind, content, ts, n, SESSION, CWD)


async def entries_until(
    next_entry: Callable[[], Awaitable[dict[str, Any]]], commands: set[str]
) -> list[dict[str, Any]]:
    """The next entries with these commands, one of each, whatever else comes between."""
    got: dict[str, dict[str, Any]] = {}
    while set(got) != commands:
        entry = await next_entry()
        if entry["command"] in commands:
            assert entry["command"] not in got, entry
            got[entry["command"]] = entry
        else:
            assert entry["command"] == "navigate", entry
    return list(got.values())


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (apt-get install)")
async def test_a_failing_fetch_is_linked_to_the_call_that_caused_it(
    make_client: ClientFactory, chromium: str, tmp_path: Path
) -> None:
    projects = tmp_path / "projects"
    transcript = projects / "-home-dev-checkout" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(record("prompt", "Check that saving works.", now_iso(), 0))
    client = await make_client(claude_dirs=[projects])
    runtime = tmp_path / "observer-run"
    write_runtime_file(runtime, {"port": client.port, "pid": 0, "token": TOKEN})
    pages = await app_server()
    observer = asyncio.create_task(observe(chromium, runtime, CWD, max_backoff_s=0.5))
    stream = await client.get("/activity/stream", params={"workspace": CWD}, headers=AUTH)
    reader = SSEReader(stream)

    async def next_entry(timeout: float = 10) -> dict[str, Any]:
        frame = await asyncio.wait_for(reader.event(), timeout)
        assert frame.event == "activity", frame.raw
        return dict(frame.data)

    try:
        async with aiohttp.ClientSession() as http:

            async def targets() -> Any:
                try:
                    async with http.get(f"{chromium}/json/list") as resp:
                        return [t for t in await resp.json() if t["type"] == "page"]
                except aiohttp.ClientError:
                    return None

            tab = (await until(targets, 20, "the browser answers"))[0]
        page_ws = tab["webSocketDebuggerUrl"]
        for attempt in range(40):  # navigate until the observer reports it: then it is attached
            # Each attempt its own URL: on a busy machine an earlier attempt can be the one
            # reported while the last is still loading, and that load would replace the page
            # the call below drives (its fetch and its throw never happen).
            app_url = str(pages.make_url("/app").with_query(attempt=attempt))
            await cdp_call(page_ws, "Page.navigate", {"url": app_url})
            try:
                seen = await next_entry(0.5)
                break
            except TimeoutError:
                continue
        else:
            raise AssertionError("the observer never reported the navigation")
        while seen["url"] != app_url:  # the last attempt's page, loaded
            assert seen["command"] == "navigate", seen
            seen = await next_entry()

        # The agent's Playwright call starts (its tool_use is in the transcript) ...
        with transcript.open("a") as f:
            f.write(
                record(
                    "use",
                    [
                        {
                            "type": "tool_use",
                            "id": CALL_ID,
                            "name": "mcp__playwright__browser_click",
                            "input": {"element": "Save", "ref": "e7"},
                        }
                    ],
                    now_iso(),
                    1,
                )
            )

        async def call_item() -> Any:
            listed = await (await client.get("/api/workspaces", headers=AUTH)).json()
            if not listed["workspaces"]:
                return None
            ws = listed["workspaces"][0]["id"]
            snap = await (await client.get(f"/workspace/{ws}/session", headers=AUTH)).json()
            uses = [i for i in snap["items"] if i["type"] == "tool_use"]
            return (ws, uses[0]) if uses else None

        ws, use = await until(call_item, 20, "the tool call is read")
        # ... and the page it drives fails a request and throws.
        await cdp_call(page_ws, "Runtime.evaluate", {"expression": "save(); setTimeout(render)"})
        during = await entries_until(next_entry, {"request.failed", "exception"})
        failed = next(e for e in during if e["command"] == "request.failed")
        thrown = next(e for e in during if e["command"] == "exception")
        assert failed["args"] == ["POST", str(pages.make_url("/api/session")), "500"]
        assert failed["error"] == "HTTP 500 Internal Server Error"
        assert "theme is not defined" in thrown["error"]
        assert thrown["args"][0].startswith(f"at render ({app_url}:3:")
        # Live: the stream already names the call, while it is still running.
        assert {e["tool_use_id"] for e in during} == {CALL_ID}
        assert failed["link"]["label"] == "click e7" and failed["link"]["item_id"] == use["id"]

        # The call's result; then the page fails once more, after the call: not linked.
        with transcript.open("a") as f:
            f.write(
                record(
                    "result",
                    [{"tool_use_id": CALL_ID, "type": "tool_result", "content": "Clicked Save"}],
                    now_iso(),
                    2,
                )
            )

        async def result_read() -> bool:
            snap = await (await client.get(f"/workspace/{ws}/session", headers=AUTH)).json()
            return any(i["type"] == "tool_result" for i in snap["items"])

        await until(result_read, 20, "the result is read")
        after_result = datetime.now(UTC)
        await cdp_call(page_ws, "Runtime.evaluate", {"expression": "save()"})
        (later,) = await entries_until(next_entry, {"request.failed"})
        assert "tool_use_id" not in later
        assert datetime.fromisoformat(later["ts"]) >= after_result

        body = await (await client.get(f"/workspace/{ws}/session/items/{use['id']}/activity",
                                       headers=AUTH)).json()  # fmt: skip
        assert sorted(e["id"] for e in body["entries"]) == sorted(e["id"] for e in during)
        assert (body["summary"]["failed_requests"], body["summary"]["page_errors"]) == (1, 1)
    finally:
        observer.cancel()
        stream.close()
        await pages.close()
        await asyncio.gather(observer, return_exceptions=True)
