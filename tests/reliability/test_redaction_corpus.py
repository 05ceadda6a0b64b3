"""Redaction corpus: 45 real-looking (fake) secrets of 16 kinds, embedded in tool outputs, tool
arguments, URLs and prose, ingested with every secret split across two body chunks and also
written into a real Claude transcript. None may survive anywhere a user or agent can read:
SSE, snapshots, full-item fetch, MCP, the debug trace, or the files under the data dir. Each
becomes `[REDACTED:<rule>]`; git SHAs, UUIDs and base64 image data stay intact."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import socket
import string
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.harness.auth import AUTH, TOKEN
from tests.harness.server import Server
from tests.harness.waiting import until, wait_until
from tests.reliability.harness import MID_SESSION, Mirror

from .report import record

RNG = random.Random(8)
ALNUM = string.ascii_letters + string.digits


def r(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def _jwt() -> str:
    def b64(d: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    return f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64({'sub': r(8), 'iat': 1700000000})}.{r(43, ALNUM + '-_')}"


def _pem() -> str:
    body = "\n".join(r(64, ALNUM + "+/") for _ in range(4))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


# (rule, secret value, text that carries it); the secret value is what must never be seen.
def corpus() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for _ in range(3):
        s = "sk-ant-api03-" + r(80, ALNUM + "-_") + "AA"
        out.append(
            ("anthropic_key", s, f"export ANTHROPIC_KEY_USED={s[:0]}; curl -H 'x-api-key: {s}' api")
        )
    for prefix in ("sk-proj-", "sk-", "sk-svcacct-"):
        s = prefix + r(48)
        out.append(("openai_key", s, f"client = OpenAI(api_key_value='{s}')"))
    for _ in range(2):
        s = "ghp_" + r(36)
        out.append(("github_token", s, f"git push https://github.com/a/b using {s} done"))
    s = "github_pat_" + r(22) + "_" + r(59)
    out.append(("github_token", s, f"GH={s[:0]}x token {s}"))
    for _ in range(2):
        s = f"xoxb-{r(12, string.digits)}-{r(13, string.digits)}-{r(24)}"
        out.append(("slack_token", s, f"slack client token {s} ok"))
    s = f"T{r(8, string.ascii_uppercase)}/B{r(8, string.ascii_uppercase)}/{r(24)}"
    out.append(("slack_token", s, f"POST https://hooks.slack.com/services/{s} 200"))
    for prefix in ("sk_live_", "rk_live_", "sk_test_"):
        s = prefix + r(24)
        out.append(("stripe_key", s, f"stripe.api_key_used = {s}"))
    for _ in range(3):
        s = "AIza" + r(35, ALNUM + "-_")
        out.append(("google_api_key", s, f"maps url key {s} end"))
    for _ in range(3):
        s = "AKIA" + r(16, string.ascii_uppercase + string.digits)
        out.append(("aws_access_key", s, f"[default]\naws_access_key_id_was {s}\n"))
    for _ in range(2):
        s = r(40, ALNUM + "/+")
        out.append(("aws_secret", s, f"aws_secret_access_key = {s}"))
    for _ in range(3):
        s = _jwt()
        out.append(("jwt", s, f"session cookie-less jwt {s} expires"))
    for _ in range(2):
        s = _pem()
        out.append(("private_key", s.splitlines()[2], f"cat id_rsa\n{s}\n"))
    for scheme in ("Bearer", "token", "Basic"):
        s = r(40)
        out.append(("authorization", s, f"curl -H 'Authorization: {scheme} {s}' https://api"))
    for _ in range(3):
        s = r(16) + "!" + r(4)
        out.append(("url_credentials", s, f"git clone https://deploy:{s}@git.example.com/r.git"))
    for name in ("access_token", "client_secret", "api_key"):
        s = r(32)
        out.append(("query_secret", s, f"GET https://api.example.com/v1/x?page=2&{name}={s}&q=1"))
    for _ in range(2):
        s = r(32)
        out.append(("cookie", s, f"Cookie: sessionid={s}; theme=dark"))
    for name in ("DATABASE_PASSWORD", "STRIPE_WEBHOOK_SECRET", "GITHUB_TOKEN"):
        s = r(24)
        out.append(("env_secret", s, f"$ env | grep {name[:3]}\n{name}={s}\n"))
    return out


CORPUS = corpus()
SHA = hashlib.sha1(b"commit").hexdigest()
UUID = "3f2b8c1e-9a4d-4e7f-b2c6-5d8e1a0f4b93"
PNG_B64 = base64.b64encode(bytes(range(256)) * 2).decode()
INTACT = [SHA, UUID, PNG_B64[:300]]
WS_DIR = "/home/dev/secrets"


def events() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n, (_rule, _secret, text) in enumerate(CORPUS):
        place = n % 4
        if place == 0:
            out.append(
                {"type": "tool_result", "tool_use_id": f"t{n}", "name": "Bash", "output": text}
            )
        elif place == 1:
            out.append({"type": "tool_use", "tool_use_id": f"t{n}", "name": "Bash", "input": text})
        elif place == 2:
            out.append({"type": "assistant", "content": f"I found this: {text}"})
        else:
            out.append({"type": "user", "content": f"use {text} please"})
    out.append(
        {
            "type": "assistant",
            "content": f"commit {SHA} id {UUID} img data:image/png;base64,{PNG_B64[:300]}",
        }
    )
    return out


def _post_split(server: Server, body: bytes, cuts: list[int]) -> dict[str, Any]:
    """The NDJSON body in pieces (chunked), cut in the middle of secrets, with pauses."""
    head = (f"POST /api/ingest?workspace={WS_DIR}&format=events&session=sec HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{server.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n").encode()  # fmt: skip
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(head)
        last = 0
        for cut in [*cuts, len(body)]:
            piece = body[last:cut]
            if piece:
                s.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                time.sleep(0.01)
            last = cut
        s.sendall(b"0\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data[:300]
    return json.loads(
        data.split(b"\r\n\r\n", 1)[1].split(b"\r\n")[1]
        if b"chunked" in data.split(b"\r\n\r\n")[0].lower()
        else data.split(b"\r\n\r\n", 1)[1]
    )


def _mcp(server: Server, ws: str, session: str) -> str:
    def post(body: dict[str, Any], sid: str | None = None) -> tuple[dict[str, str], bytes]:
        headers = {
            **AUTH,
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        if sid:
            headers["Mcp-Session-Id"] = sid
        req = urllib.request.Request(server.url("/mcp"), data=json.dumps(body).encode(),
                                     headers=headers, method="POST")  # fmt: skip
        with urllib.request.urlopen(req, timeout=10) as resp:
            return dict(resp.headers), resp.read()

    headers, _ = post(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
    )
    sid = headers["Mcp-Session-Id"]
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    _, body = post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "sidemirror_get_session",
                "arguments": {"workspace": ws, "session": session, "limit": 500},
            },
        },
        sid,
    )
    return body.decode()


def _claude_transcript(server: Server) -> str:
    """A real transcript, its tool results replaced by the corpus texts."""
    project = server.claude / "-path-to-Demo"
    project.mkdir(parents=True)
    lines = MID_SESSION.read_bytes().splitlines()
    texts = iter(text for _r, _s, text in CORPUS)
    out = []
    for line in lines:
        rec = json.loads(line)
        content = (
            rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
        )
        if rec.get("type") == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    block["content"] = next(texts, "no more")
        out.append(json.dumps(rec))
    (project / MID_SESSION.name).write_text("\n".join(out) + "\n")
    return MID_SESSION.stem


def _ws(directory: str) -> str:
    return hashlib.sha256(directory.encode()).hexdigest()[:12]


async def test_no_secret_survives_anywhere(tmp_path: Path) -> None:
    assert len(CORPUS) >= 40 and len({rule for rule, _, _ in CORPUS}) >= 12
    trace = tmp_path / "trace.jsonl"
    server = Server(tmp_path, "--debug-events-jsonl", str(trace))
    claude_sid = _claude_transcript(server)
    server.start()
    ws = _ws(WS_DIR)
    seen: dict[str, str] = {}
    try:
        # A live client from the start: it sees every item as it is published.
        import asyncio

        server.ingest(WS_DIR, "sec", [{"type": "user", "content": "start"}])
        live = Mirror(server, f"/workspace/{ws}/session/stream?session=sec&limit=10000")
        stop = asyncio.Event()
        task = asyncio.create_task(live.run(stop))
        await until(lambda: live.connects > 0, 10, step=0.05)
        body = b"".join(json.dumps(e).encode() + b"\n" for e in events())
        cuts = sorted({body.index(secret.encode()) + len(secret) // 2
                       for _r, secret, _t in CORPUS if secret.encode() in body})  # fmt: skip
        assert len(cuts) >= 40  # every secret is cut in two between body chunks
        result = _post_split(server, body, cuts)
        assert result["accepted"] == len(events()) and result["rejected"] == 0, result
        want = len(events()) + 1
        await until(lambda: len(live.items) >= want, 10, step=0.05)
        stop.set()
        await asyncio.wait_for(task, 5)
        seen["sse"] = json.dumps(live.items)
        snap = server.snapshot(ws, "sec")
        seen["snapshot"] = json.dumps(snap)
        seen["full_items"] = json.dumps(
            [
                server.get(f"/workspace/{ws}/session/items/{i['id']}?session=sec")
                for i in snap["items"]
            ]
        )
        seen["mcp"] = _mcp(server, ws, "sec")
        claude_ws = _ws("/path/to/Demo")
        csnap = wait_until(lambda: server.snapshot(claude_ws, claude_sid), 20, "claude")
        seen["claude_snapshot"] = json.dumps(csnap)
        seen["claude_full_items"] = json.dumps(
            [
                server.get(f"/workspace/{claude_ws}/session/items/{i['id']}?session={claude_sid}")
                for i in csnap["items"]
                if i["type"] == "tool_result"
            ]
        )
        seen["claude_mcp"] = _mcp(server, claude_ws, claude_sid)
    finally:
        server.stop()
    seen["debug_trace"] = trace.read_text()
    seen["data_dir_files"] = "".join(
        p.read_text(errors="replace") for p in server.data.rglob("*") if p.is_file()
    )
    seen["server_log"] = server.stderr()
    leaks = {
        where: [
            rule for rule, secret, _ in CORPUS if secret in text or json.dumps(secret)[1:-1] in text
        ]
        for where, text in seen.items()
    }
    assert all(not v for v in leaks.values()), leaks
    full = json.loads(seen["full_items"])
    for (rule, _secret, _text), item in zip(CORPUS, full[1:], strict=False):
        shown = json.dumps(item)
        assert f"[REDACTED:{rule}]" in shown, (rule, shown[:400])
    for where in (
        "sse",
        "snapshot",
        "full_items",
        "mcp",
        "debug_trace",
        "claude_snapshot",
        "claude_full_items",
        "claude_mcp",
    ):
        assert "[REDACTED:" in seen[where], where
    intact = [x for x in INTACT if x not in seen["full_items"]]
    assert not intact, intact
    rules = sorted({rule for rule, _, _ in CORPUS})
    record("redaction corpus", {"secrets": len(CORPUS), "kinds": len(rules), "rules": rules,
           "places": sorted(seen), "leaks": 0, "intact": len(INTACT)}, trials=len(CORPUS))  # fmt: skip
