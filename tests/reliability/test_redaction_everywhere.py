"""Every secret kind the redactor knows, in every field of every input, against a real server;
then every output is searched, and no secret (nor a long prefix of one) may be found.

Inputs: activity entries of every type (POST, WebSocket and MCP), each ingest format (events,
stream-json, acp, codex-exec; real recorded lines with a secret added to every string), a Claude
Code transcript and a Codex rollout on disk (the same), MCP arguments, workspace paths and
branches, and values typed into pages by browser tools. Secrets also sit across each field's
length cap, so a field cut before it is redacted would show. Outputs: SSE (live and replayed),
every JSON route, MCP answers, error bodies, the debug trace, the server's stdout and stderr,
and every file under the data dir.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp

from tests.harness.auth import AUTH, NDJSON
from tests.harness.paths import FIXTURES
from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.harness import MID_SESSION

from .report import record
from .test_redaction_corpus import CORPUS

TYPED = "Typed-Value-0042!x"
# One of each kind, in a text that carries it (a header, an assignment, a URL...).
KINDS: list[tuple[str, str, str]] = [
    next(c for c in CORPUS if c[0] == rule) for rule in dict.fromkeys(r for r, _, _ in CORPUS)
] + [("typed", TYPED, f'await page.getByLabel("Password").fill("{TYPED}")')]
SECRETS = sorted({s for _, s, _ in CORPUS} | {TYPED})
# Leaves that say what a record is, not what it carries: kept so every record still parses.
STRUCTURAL = frozenset({
    "type", "subtype", "role", "method", "kind", "sessionUpdate", "stop_reason", "stopReason",
    "status", "jsonrpc", "timestamp", "ts", "state",
})  # fmt: skip
WS = {fmt: f"/home/dev/corpus-{fmt}" for fmt in ("events", "stream-json", "acp", "codex-exec")}


def leaks(text: str) -> list[str]:
    """The secrets `text` shows whole, JSON-escaped, or by a long enough prefix."""
    found = []
    for secret in SECRETS:
        forms = {secret, json.dumps(secret)[1:-1]}
        if len(secret) >= 24:
            forms.add(secret[:16])
        if any(form in text for form in forms):
            found.append(secret)
    return found


def context(text: str) -> list[str]:
    """Each leak with what surrounds it, for the failure message."""
    out = []
    for secret in leaks(text):
        for form in (secret, json.dumps(secret)[1:-1], secret[:16]):
            at = text.find(form)
            if at >= 0:
                out.append(text[max(0, at - 150) : at + len(form) + 60])
                break
    return out


def carrier(key: str) -> str:
    """A secret-carrying text, the same one for the same value (so ids still join)."""
    return KINDS[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(KINDS)][2]


def salted(value: Any, parent_key: str = "") -> Any:
    """`value` with a secret-carrying text added to every string leaf but the structural ones."""
    if isinstance(value, dict):
        return {k: v if k in STRUCTURAL else salted(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [salted(v, parent_key) for v in value]
    if isinstance(value, str) and value:
        return f"{value} {carrier(value)}"
    return value


def across_cap(text: str, secret: str, cap: int) -> str:
    """`text` padded so `secret` straddles position `cap` (cut there, half of it would stay)."""
    start = text.index(secret) if secret in text else 0
    return "p" * max(0, cap - start - len(secret) // 2 - 1) + " " + text


# --- inputs ---


def event_lines() -> list[dict[str, Any]]:
    """format=events: every string field of every item type, once per secret kind."""
    out: list[dict[str, Any]] = []
    for n, (_rule, secret, text) in enumerate(KINDS):
        base = {"session": "ev"}
        out += [
            {**base, "type": "user", "content": across_cap(text, secret, 500)},
            {**base, "type": "assistant", "content": text, "segment_id": text,
             "parent_tool_use_id": text, "ts": text},
            {**base, "type": "thinking", "content": text},
            {**base, "type": "tool_use", "tool_use_id": text, "name": text, "input": text},
            {**base, "type": "tool_result", "tool_use_id": text, "name": text,
             "output": across_cap(text, secret, 500)},
            {**base, "type": "turn_complete", "turn": n + 1, "model": text},
            {**base, "type": "system", "subtype": text, "content": text},
            {**base, "type": "error", "message": text},
            {**base, "type": "plan",
             "entries": [{"content": text, "status": text, "priority": text}]},
            {**base, "type": "assistant_delta", "segment_id": text, "text": text},
            {"session": text, "type": "user", "content": "session id carries it"},
        ]  # fmt: skip
    return out


def stream_json_lines() -> list[dict[str, Any]]:
    lines = []
    for path in sorted((FIXTURES / "stream-json").glob("*.jsonl")):
        lines += [salted(json.loads(line)) for line in path.read_text().splitlines() if line]
    session = lines[0].get("session_id", "sj")
    browser = [
        {"type": "mcp__plugin_playwright_playwright__browser_type",
         "input": {"element": "Password", "ref": "e5", "text": TYPED}},
        {"type": "mcp__playwright__browser_fill_form",
         "input": {"fields": [{"name": "Password", "ref": "e3", "value": TYPED}]}},
    ]  # fmt: skip
    for n, call in enumerate(browser):
        lines.append({"type": "assistant", "session_id": session, "message": {
            "id": f"msg_b{n}", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": f"toolu_b{n}", "name": call["type"],
                         "input": call["input"]}]}})  # fmt: skip
    return lines


def acp_lines() -> list[dict[str, Any]]:
    lines = []
    for path in sorted((FIXTURES / "acp").glob("*.jsonl")):
        lines += [salted(json.loads(line)) for line in path.read_text().splitlines() if line]
    return lines


def codex_exec_lines() -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [{"type": "thread.started", "thread_id": "cx"}]
    for n, (_rule, _secret, text) in enumerate(KINDS):
        items = [
            {"id": f"c{n}", "type": "command_execution", "command": text,
             "aggregated_output": text, "exit_code": 0},
            {"id": f"m{n}", "type": "mcp_tool_call", "server": "srv", "tool": "t",
             "arguments": {"q": text}, "result": {"content": [{"type": "text", "text": text}]}},
            {"id": f"f{n}", "type": "file_change", "changes": [{"path": text, "kind": "add"}]},
            {"id": f"a{n}", "type": "agent_message", "text": text},
            {"id": f"r{n}", "type": "reasoning", "text": text},
            {"id": f"w{n}", "type": "web_search", "query": text},
            {"id": f"t{n}", "type": "todo_list", "items": [{"text": text, "completed": False}]},
            {"id": f"e{n}", "type": "error", "message": text},
        ]  # fmt: skip
        lines += [{"type": "item.completed", "item": salted(item)} for item in items]
    lines.append({"type": "item.completed", "item": {
        "id": "typed", "type": "mcp_tool_call", "server": "playwright", "tool": "browser_type",
        "arguments": {"ref": "e5", "text": TYPED}}})  # fmt: skip
    lines += [{"type": "turn.failed", "error": {"message": KINDS[0][2]}}, {"type": "error",
              "message": KINDS[1][2]}]  # fmt: skip
    return lines


def activity_entries() -> list[dict[str, Any]]:
    """Every field of every entry type, once per kind; the capped ones also across their cap."""
    out: list[dict[str, Any]] = []
    types = ("command_start", "command_end", "navigation", "console", "error")
    for n, (_rule, secret, text) in enumerate(KINDS):
        kind = types[n % len(types)]
        ws = f"/home/dev/activity {text}"
        out += [
            {"type": kind, "command": text, "workspace": ws},
            {"type": kind, "command": f"{text} and more"},
            {"type": kind, "command": "goto", "args": [text, across_cap(text, secret, 2000)]},
            {"type": kind, "command": "fill", "args": ["@e5", text]},
            {"type": kind, "command": f"fill @e5 {secret}"},
            {"type": kind, "command": "browser_fill_form",
             "args": [[{"name": "Password", "ref": "e3", "value": secret}]]},
            {"type": kind, "command": "browser_type",
             "args": [{"element": "Password", "ref": "e5", "text": secret}]},
            {"type": kind, "command": "click", "url": across_cap(text, secret, 8192),
             "request_id": across_cap(text, secret, 200), "source": text, "tab_id": text,
             "result": across_cap(text, secret, 500), "error": across_cap(text, secret, 2000),
             "refs": [{"ref": text, "role": text, "name": across_cap(text, secret, 500),
                       "selector": text}]},
            {"type": kind, "command": "click", "url": f"https://shop.test/a?page=1&{text}"},
        ]  # fmt: skip
    return out


def claude_transcript(server: Server) -> str:
    """The recorded transcript with a secret added to every string (cwd and branch included),
    plus browser tool calls that type a value."""
    lines = [salted(json.loads(line)) for line in MID_SESSION.read_text().splitlines() if line]
    template = next(rec for rec in reversed(lines) if rec.get("type") == "assistant")
    for n, (name, tool_input) in enumerate([
        ("mcp__playwright__browser_type", {"element": "Password", "ref": "e5", "text": TYPED}),
        ("mcp__playwright__browser_fill_form",
         {"fields": [{"name": "Password", "type": "textbox", "ref": "e3", "value": TYPED}]}),
        ("mcp__chrome-devtools__fill", {"uid": "1_4", "value": TYPED}),
        ("Bash", {"command": f"node -e 'page.keyboard.type(\"{TYPED}\")'"}),
    ]):  # fmt: skip
        rec = copy.deepcopy(template)
        rec["uuid"] = f"browser-{n}"
        rec["message"] = {
            **rec["message"],
            "id": f"msg_browser_{n}",
            "content": [
                {"type": "tool_use", "id": f"toolu_browser_{n}", "name": name, "input": tool_input}
            ],
        }
        lines.append(rec)
    project = server.claude / "-home-dev-salted"
    project.mkdir(parents=True, exist_ok=True)
    path = project / MID_SESSION.name
    path.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    return str(next(rec["cwd"] for rec in lines if "cwd" in rec))


def codex_rollout(server: Server) -> None:
    source = next((FIXTURES / "codex").glob("rollout-*.jsonl"))
    folder = server.tmp / "codex" / "sessions" / "2026" / "05" / "11"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [salted(json.loads(line)) for line in source.read_text().splitlines() if line]
    (folder / source.name).write_text("".join(json.dumps(rec) + "\n" for rec in lines))


# --- talking to the server ---


def request(server: Server, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None) -> tuple[int, str]:  # fmt: skip
    data = (
        None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    )
    reply = server.exchange(method, path, data, {**AUTH, **(headers or {})})
    return reply.status, reply.body.decode()


def ingest(server: Server, fmt: str, lines: list[dict[str, Any]], workspace: str,
           session: str = "q") -> dict[str, Any]:  # fmt: skip
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    query = urllib.parse.urlencode({"workspace": workspace, "format": fmt, "session": session})
    status, text = request(server, "POST", f"/api/ingest?{query}", body, NDJSON)
    assert status == 200, text
    result: dict[str, Any] = json.loads(text)
    return result


class Mcp:
    def __init__(self, server: Server, client_name: str) -> None:
        self.server = server
        self.answers: list[str] = []
        self.sid = ""
        self.sid = self._post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": client_name, "version": "1"}}})[0]  # fmt: skip
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _post(self, body: dict[str, Any]) -> tuple[str, str]:
        headers = {"Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18",
                   "Accept": "application/json, text/event-stream", **AUTH}  # fmt: skip
        if self.sid:
            headers["Mcp-Session-Id"] = self.sid
        reply = self.server.exchange("POST", "/mcp", json.dumps(body).encode(), headers)
        text = reply.body.decode()
        sid = reply.headers.get("Mcp-Session-Id", "") if reply.status < 400 else ""
        self.answers.append(text)
        return sid, text

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        return self._post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})[1]  # fmt: skip

    def method(self, name: str) -> str:
        return self._post({"jsonrpc": "2.0", "id": 2, "method": name, "params": {}})[1]


def sse_until_snapshot(server: Server, path: str) -> str:
    """A stream's opening (hello, snapshot) as sent, read until its snapshot is in."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request("GET", path, headers=AUTH)
    resp = conn.getresponse()
    assert resp.status == 200, (path, resp.status)
    seen = b""
    while b"event: snapshot" not in seen or not seen.endswith(b"\n\n"):
        chunk = resp.read1(65536)
        if not chunk:
            break
        seen += chunk
    conn.close()
    return seen.decode()


async def live_stream(server: Server, path: str, stop: asyncio.Event, out: list[str]) -> None:
    async with (
        aiohttp.ClientSession() as http_session,
        http_session.get(
            server.url(path), headers=AUTH, timeout=aiohttp.ClientTimeout(total=None)
        ) as resp,
    ):
        while not stop.is_set():
            try:
                chunk = await asyncio.wait_for(resp.content.readany(), 0.2)
            except TimeoutError:
                continue
            if not chunk:
                return
            out.append(chunk.decode())


def raw_request(server: Server, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(data)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
        return got


def workspace_id(directory: str) -> str:
    return hashlib.sha256(directory.encode()).hexdigest()[:12]


async def test_no_secret_in_any_field_reaches_any_output(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    server = Server(tmp_path, "--debug-events-jsonl", str(trace), "--log-level", "debug")
    claude_cwd = claude_transcript(server)
    codex_rollout(server)
    server.start()
    seen: dict[str, str] = {}
    live: list[str] = []
    activity_live: list[str] = []
    stop = asyncio.Event()
    try:
        ingest(server, "events", [{"type": "user", "content": "start", "session": "ev"}],
               WS["events"])  # fmt: skip
        streams = [
            asyncio.create_task(live_stream(
                server, f"/workspace/{workspace_id(WS['events'])}/session/stream?session=ev",
                stop, live)),
            asyncio.create_task(live_stream(server, "/activity/stream", stop, activity_live)),
        ]  # fmt: skip
        await asyncio.sleep(0.3)
        results = {
            "events": ingest(server, "events", event_lines(), WS["events"], KINDS[3][2]),
            "stream-json": ingest(server, "stream-json", stream_json_lines(), WS["stream-json"]),
            "acp": ingest(server, "acp", acp_lines(), WS["acp"]),
            "codex-exec": ingest(server, "codex-exec", codex_exec_lines(), WS["codex-exec"]),
        }
        for _rule, _secret, text in KINDS:
            results[f"workspace {text[:20]}"] = ingest(
                server, "events", [{"type": "user", "content": "hi"}], f"/home/dev/{text}/x"
            )
        for fmt, result in results.items():
            assert result["accepted"] > 0, (fmt, result)
        seen["ingest_answers"] = json.dumps(results)
        errors = []
        for entry in activity_entries():
            status, text = request(server, "POST", "/api/activity", entry,
                                   {"Content-Type": "application/json"})  # fmt: skip
            assert status == 200, (entry, text)
            errors.append(text)
        async with (
            aiohttp.ClientSession() as http_session,
            http_session.ws_connect(server.url("/api/activity/ws"), headers=AUTH) as ws,
        ):
            for entry in activity_entries()[:20]:
                await ws.send_str(json.dumps(entry))
                errors.append((await ws.receive()).data)
        seen["activity_answers"] = "\n".join(errors)
        # Refusals quote what was sent: their messages are output too.
        refusals = [
            request(server, "POST", "/api/activity", {"command": "x", "status": text},
                    {"Content-Type": "application/json"})[1]
            for _r, _s, text in KINDS
        ]  # fmt: skip
        refusals += [request(server, "GET", f"/workspace/{workspace_id(WS['events'])}/session?"
                             + urllib.parse.urlencode({"session": text}))[1]
                     for _r, _s, text in KINDS]  # fmt: skip
        refusals.append(json.dumps(ingest(server, "events", [{"type": t} for _r, _s, t in KINDS],
                                          WS["events"])))  # fmt: skip
        seen["refusals"] = "\n".join(refusals)
        # MCP: arguments of every tool, a client name and a method name that carry secrets.
        mcp = Mcp(server, KINDS[0][2])
        for _rule, secret, text in KINDS:
            mcp.call(
                "sidemirror_report_browser_action",
                {
                    "command": text,
                    "args": [text, f"https://a.test/?{text}"],
                    "url": text,
                    "request_id": text,
                    "result": text,
                    "error": text,
                    "workspace": f"/w/{text}",
                    "refs": [{"ref": text, "name": text, "selector": text, "role": text}],
                },
            )
            mcp.call(
                "sidemirror_report_browser_action", {"command": "fill", "args": ["@e1", secret]}
            )
            mcp.call(
                "sidemirror_get_session", {"workspace": f"/home/dev/{text}/x", "session": text}
            )
            mcp.call("sidemirror_get_activity", {"workspace": f"/w/{text}"})
            mcp.call(text, {})
            mcp.method(text)  # fmt: skip
        # Everything a client can read back.
        await asyncio.sleep(0.5)
        wait_until(lambda: len(json.loads(request(server, "GET", "/api/workspaces")[1])
                             ["workspaces"]) >= 6 + len(KINDS), 30, "workspaces")  # fmt: skip
        listing = json.loads(request(server, "GET", "/api/workspaces")[1])["workspaces"]
        seen["workspaces"] = json.dumps(listing)
        snapshots, full, sse = [], [], []
        for ws_ in listing:
            sessions = json.loads(request(server, "GET", f"/workspace/{ws_['id']}/sessions")[1])
            snapshots.append(json.dumps(sessions))
            for session in sessions["sessions"]:
                query = urllib.parse.urlencode({"session": session["id"], "limit": 10000})
                status, body = request(server, "GET", f"/workspace/{ws_['id']}/session?{query}")
                assert status == 200, body
                snapshots.append(body)
                for item in json.loads(body)["items"]:
                    item_q = urllib.parse.urlencode({"session": session["id"]})
                    full.append(request(server, "GET", f"/workspace/{ws_['id']}/session/items/"
                                        f"{urllib.parse.quote(item['id'])}?{item_q}")[1])  # fmt: skip
                sse.append(
                    sse_until_snapshot(server, f"/workspace/{ws_['id']}/session/stream?{query}")
                )
                mcp.call(
                    "sidemirror_get_session",
                    {"workspace": ws_["id"], "session": session["id"], "limit": 1000},
                )
            mcp.call("sidemirror_get_activity", {"workspace": ws_["id"], "limit": 1000})
        mcp.call("sidemirror_list_workspaces", {})
        mcp.call("sidemirror_get_activity", {"limit": 1000})
        seen["snapshots"] = "\n".join(snapshots)
        seen["full_items"] = "\n".join(full)
        seen["sse_replay"] = "\n".join(sse)
        seen["mcp"] = "\n".join(mcp.answers)
        refs = [request(server, "GET", "/api/refs?" + urllib.parse.urlencode({"url": text}))[1]
                for _r, _s, text in KINDS]  # fmt: skip
        refs.append(request(server, "GET", "/api/activity/latest-workspace")[1])
        refs.append(request(server, "GET", "/health")[1])
        seen["other_routes"] = "\n".join(refs)
        seen["activity_replay"] = sse_until_snapshot_or_idle(server)
        # A malformed request holding an Authorization header: aiohttp logs the parse error.
        for _r, secret, _t in KINDS[:3]:
            raw_request(server, (f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                                 f"Authorization: Bearer {secret}\x01\r\n\r\n").encode())  # fmt: skip
        raw_request(server, f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                    "Authorization: Bearer ".encode() + b"\xff\xfe" + KINDS[0][1].encode()
                    + b"\r\nConnection: close\r\n\r\n")  # fmt: skip
        stop.set()
        await asyncio.wait_for(asyncio.gather(*streams, return_exceptions=True), 10)
        seen["sse_live"] = "".join(live)
        seen["activity_live"] = "".join(activity_live)
    finally:
        stop.set()
        server.stop()
    seen["debug_trace"] = trace.read_text()
    seen["server_stderr"] = server.stderr()
    seen["server_stdout"] = "".join(p.read_text() for p in tmp_path.glob("out.*.log"))
    files = [p for p in server.data.rglob("*") if p.is_file()]
    seen["data_dir_files"] = "".join(p.read_text(errors="replace") for p in files)
    seen["data_dir_names"] = "\n".join(str(p) for p in server.data.rglob("*"))

    found = {where: context(text) for where, text in seen.items()}
    assert not any(found.values()), {k: v for k, v in found.items() if v}
    # Not vacuous: the inputs arrived, and each place shows what was redacted.
    for where in ("sse_live", "sse_replay", "snapshots", "full_items", "mcp", "debug_trace",
                  "data_dir_files", "activity_live", "activity_replay", "workspaces"):  # fmt: skip
        assert "[REDACTED:" in seen[where], where
    for rule in {r for r, _, _ in KINDS}:
        assert f"[REDACTED:{rule}]" in seen["snapshots"] + seen["activity_replay"], rule
    assert "[REDACTED:typed]" in seen["snapshots"]
    assert "TYPED" not in seen["server_stderr"] and "Authorization" not in seen["server_stderr"]
    # The files on disk were read: their salted cwd (and Claude's branch) shown redacted.
    by_agent = {w["agent"]: w for w in listing if "[REDACTED:" in w["directory"]}
    assert {"claude", "codex", "events"} <= set(by_agent), listing
    assert "[REDACTED:" in (by_agent["claude"]["branch"] or ""), by_agent["claude"]
    assert claude_cwd.split(" ", 1)[0] in by_agent["claude"]["directory"]
    record("redaction everywhere", {"kinds": len(KINDS), "places": sorted(seen), "leaks": 0,
           "bytes_searched": sum(len(v) for v in seen.values())}, trials=len(KINDS))  # fmt: skip


def sse_until_snapshot_or_idle(server: Server) -> str:
    """The activity stream's replay (it has no snapshot event: entries, then live)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=2)
    conn.request("GET", "/activity/stream", headers=AUTH)
    resp = conn.getresponse()
    seen = b""
    try:
        while chunk := resp.read1(65536):
            seen += chunk
    except TimeoutError:
        pass  # replay done: the stream went quiet
    conn.close()
    return seen.decode()
