"""`observe-cdp` against a real Chromium: navigations, console errors, failed requests and tabs
arrive on `/activity/stream`, in order."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from sidemirror.clients.cdp_events import CdpMapper
from sidemirror.clients.observe_cdp import observe
from sidemirror.core.store import workspace_id_for
from sidemirror.runtime_file import write_runtime_file

from tests.harness.auth import AUTH, TOKEN
from tests.harness.chromium import QUIET_FLAGS
from tests.harness.ports import free_port
from tests.server.sse import Frame, SSEReader
from tests.server.support import ClientFactory

CHROMIUM = Path("/usr/bin/chromium")
WS_DIR = "/home/dev/browsing"


@pytest.fixture
async def chromium(tmp_path: Path) -> AsyncIterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            f"--remote-debugging-port={port}",
            *QUIET_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def page_server(refused_port: int) -> TestServer:
    page = (
        '<!doctype html><link rel="icon" href="data:,"><title>t</title><script>'
        'console.log("fine"); console.error("boom", 42);'
        # Delayed: a new tab's first script can run before the observer's Network.enable lands
        # (CDP replays console messages on enable, but not network events).
        f'setTimeout(() => fetch("http://127.0.0.1:{refused_port}/nope").catch(() => {{}}), 300);'
        "</script>"
    )

    async def handler(request: web.Request) -> web.Response:
        if request.path == "/page":
            return web.Response(text=page, content_type="text/html")
        return web.Response(text="<link rel=icon href='data:,'>ready", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", handler)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


async def cdp_call(ws_url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.ws_connect(ws_url, max_msg_size=0) as ws:
        await ws.send_str(json.dumps({"id": 1, "method": method, "params": params}))
        while True:
            msg = json.loads(await ws.receive_str())
            if msg.get("id") == 1:
                result: dict[str, Any] = msg.get("result", {})
                return result


async def next_activity(reader: SSEReader, timeout: float = 10) -> Frame:
    frame = await asyncio.wait_for(reader.event(), timeout)
    assert frame.event == "activity", frame.raw
    return frame


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (apt-get install)")
async def test_observer_reports_real_browser_events_in_order(
    make_client: ClientFactory, chromium: str, tmp_path: Path
) -> None:
    client = await make_client()
    runtime = tmp_path / "observer-run"
    write_runtime_file(runtime, {"port": client.port, "pid": 0, "token": TOKEN})
    refused = free_port()  # nothing listens there: the fetch fails with connection refused
    pages = await page_server(refused)
    # Started before the browser answers: the observer must retry until it can connect.
    observer = asyncio.create_task(observe(chromium, runtime, WS_DIR, max_backoff_s=0.5))
    stream = await client.get("/activity/stream", headers=AUTH)
    reader = SSEReader(stream)
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(100):
                try:
                    async with http.get(f"{chromium}/json/list") as resp:
                        targets = await resp.json()
                    break
                except aiohttp.ClientError:
                    await asyncio.sleep(0.1)
            first_page = next(t for t in targets if t["type"] == "page")
            version = await (await http.get(f"{chromium}/json/version")).json()
        browser_ws = version["webSocketDebuggerUrl"]
        # Navigate the existing tab until the observer reports it: then it is attached.
        ready_url = str(pages.make_url("/ready"))
        frame: Frame | None = None
        for _ in range(40):
            await cdp_call(first_page["webSocketDebuggerUrl"], "Page.navigate", {"url": ready_url})
            try:
                frame = await next_activity(reader, 0.5)
                break
            except TimeoutError:
                continue
        assert frame is not None, "observer never reported the navigation"
        assert (frame.data["type"], frame.data["command"]) == ("navigation", "navigate")
        assert frame.data["url"] == ready_url and frame.data["source"] == "cdp"
        assert frame.data["workspace"] == workspace_id_for(WS_DIR)

        # A new tab: opened, navigated, console error, failed request, closed — in order.
        page_url = str(pages.make_url("/page"))
        created = await cdp_call(browser_ws, "Target.createTarget", {"url": page_url})
        seen = []
        for _ in range(4):
            try:
                seen.append((await next_activity(reader, 5)).data)
            except TimeoutError:
                raise AssertionError(seen) from None
        assert [(e["type"], e["command"]) for e in seen] == [
            ("navigation", "tab.open"),
            ("navigation", "navigate"),
            ("console", "console.error"),
            ("error", "request.failed"),
        ]
        tab = created["targetId"]
        assert {e["tab_id"] for e in seen} == {tab}
        assert seen[1]["url"] == page_url
        assert (seen[2]["error"], seen[2]["url"], seen[2]["status"]) == (
            "boom 42",
            page_url,
            "error",
        )
        assert seen[3]["args"] == ["GET", f"http://127.0.0.1:{refused}/nope"]
        assert "ERR_CONNECTION_REFUSED" in seen[3]["error"] and seen[3]["url"] == page_url
        ids = [int(e["id"].rpartition(".")[2]) for e in seen]
        assert ids == sorted(ids)

        await cdp_call(browser_ws, "Target.closeTarget", {"targetId": tab})
        closed = (await next_activity(reader)).data
        assert (closed["command"], closed["tab_id"], closed["url"]) == ("tab.close", tab, page_url)
    finally:
        observer.cancel()
        stream.close()
        await pages.close()
        await asyncio.gather(observer, return_exceptions=True)


def test_mapper_reports_http_errors_dialogs_and_exceptions_with_the_page_url() -> None:
    mapper = CdpMapper()
    assert mapper.attached("s1", "T1", "about:blank", is_new=False) == []
    nav = {"frame": {"id": "F", "url": "https://a.test/"}}
    assert mapper.handle("Page.frameNavigated", nav, "s1")[0]["url"] == "https://a.test/"
    iframe = {"frame": {"id": "G", "parentId": "F", "url": "https://ads.test/"}}
    assert mapper.handle("Page.frameNavigated", iframe, "s1") == []
    mapper.handle(
        "Network.requestWillBeSent",
        {"requestId": "1", "request": {"method": "POST", "url": "https://a.test/api"}},
        "s1",
    )
    [http_error] = mapper.handle(
        "Network.responseReceived",
        {
            "requestId": "1",
            "response": {
                "status": 503,
                "statusText": "Service Unavailable",
                "url": "https://a.test/api",
            },
        },
        "s1",
    )
    assert (http_error["args"], http_error["error"]) == (
        ["POST", "https://a.test/api", "503"],
        "HTTP 503 Service Unavailable",
    )
    assert mapper.handle("Network.loadingFailed", {"requestId": "2", "canceled": True}, "s1") == []
    [dialog] = mapper.handle(
        "Page.javascriptDialogOpening", {"type": "confirm", "message": "Sure?"}, "s1"
    )
    assert (dialog["command"], dialog["args"]) == ("dialog", ["confirm", "Sure?"])
    [exc] = mapper.handle(
        "Runtime.exceptionThrown",
        {
            "exceptionDetails": {
                "text": "Uncaught",
                "exception": {"description": "TypeError: x is undefined"},
            }
        },
        "s1",
    )
    assert (exc["type"], exc["error"], exc["url"]) == (
        "error",
        "TypeError: x is undefined",
        "https://a.test/",
    )
    assert mapper.handle("Runtime.consoleAPICalled", {"type": "log", "args": []}, "s1") == []
    assert mapper.handle("Page.frameNavigated", nav, "unknown-session") == []
    assert mapper.destroyed("T1")[0]["url"] == "https://a.test/"  # closing a tab we found
    assert mapper.destroyed("T1") == []
    assert mapper.attached("s2", "T2", "about:blank", is_new=True)[0]["command"] == "tab.open"
    assert mapper.destroyed("T2")[0]["command"] == "tab.close"


def test_mapper_names_where_errors_were_thrown() -> None:
    mapper = CdpMapper()
    mapper.attached("s1", "T1", "https://a.test/", is_new=False)
    stack = {
        "callFrames": [
            {
                "functionName": "load",
                "url": "https://a.test/app.js",
                "lineNumber": 9,
                "columnNumber": 4,
            },
            {"functionName": "", "url": "https://a.test/", "lineNumber": 0},
        ]
    }
    [exc] = mapper.handle(
        "Runtime.exceptionThrown",
        {"exceptionDetails": {"text": "Uncaught", "stackTrace": stack}},
        "s1",
    )
    assert exc["args"] == ["at load (https://a.test/app.js:10:5)"]
    [console] = mapper.handle(
        "Runtime.consoleAPICalled",
        {"type": "error", "args": [{"type": "string", "value": "bad"}], "stackTrace": stack},
        "s1",
    )
    assert (console["error"], console["args"]) == ("bad", ["at load (https://a.test/app.js:10:5)"])
    # A syntax error has no stack: the exception's own place; nothing known, no argument.
    [syntax] = mapper.handle(
        "Runtime.exceptionThrown",
        {
            "exceptionDetails": {
                "text": "SyntaxError",
                "url": "https://a.test/x.js",
                "lineNumber": 0,
                "columnNumber": 7,
            }
        },
        "s1",
    )
    assert syntax["args"] == ["at https://a.test/x.js:1:8"]
    [bare] = mapper.handle("Runtime.exceptionThrown", {"exceptionDetails": {"text": "?"}}, "s1")
    assert bare["args"] == []
