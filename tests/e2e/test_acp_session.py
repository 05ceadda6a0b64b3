"""An ACP session pushed through `POST /api/ingest?format=acp`, rendered in the real panel.

First a real recording (claude-agent-acp's v2 session replay: thinking, text, a terminal, an
edit, a sub-agent) followed by an `error_message` (Multica's shape: no public recording holds
one); then a session built in the schema's shape that ends cancelled: the turn shows "stopped",
the prompt's image is a chip, the mode change and the notice are small lines. Last, a client's
stored chunks kept out of order join in their numbered order, and an image the agent sent is a
chip on its reply; a call refused by a permission rule shows the rule on its card.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any

from playwright.sync_api import expect
from sidemirror.listen_socket import PORT_RANGE

from tests.e2e.support import SHOWN
from tests.harness.browser import Extension
from tests.harness.paths import ROOT
from tests.harness.ports import free_port
from tests.harness.server import Server

ACP = ROOT / "tests" / "fixtures" / "acp"
WS = "/tmp/e2e-acp-session"
AUTH_ERROR = "Authentication required. Please run the login command and try again."


def port_outside_the_range() -> int:
    """A free port the extension would not probe: the panel is pinned to it, so this test never
    takes a port another server on the machine may be using."""
    while True:
        port = free_port()
        if port not in PORT_RANGE:
            return port


def ingest_acp(server: Server, body: bytes) -> dict[str, object]:
    q = urllib.parse.urlencode({"workspace": WS, "format": "acp"})
    return server.request("POST", f"/api/ingest?{q}", body, content_type="application/x-ndjson")


def error_message(session: str) -> bytes:
    update = {
        "sessionUpdate": "error_message",
        "errorType": "auth",
        "agentId": "claude-code",
        "authCommand": "claude /login",
        "message": AUTH_ERROR,
    }
    params = {"sessionId": session, "update": update}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}).encode()


def test_an_acp_session_with_its_error_in_the_panel(ext: Extension, server_factory: Any) -> None:
    server = server_factory(port_outside_the_range())
    replay = (ACP / "session-load-replay.jsonl").read_bytes()
    result = ingest_acp(server, replay + error_message("<session>") + b"\n")
    assert result == {"accepted": 21, "rejected": 0, "status": "failed"}
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    expect(panel.locator(SHOWN)).to_contain_text("e2e-acp-session")
    feed = panel.locator(".feed")
    expect(feed.locator("[data-type=user]").first).to_contain_text("Fix the bug", timeout=10_000)
    expect(feed.locator("[data-type=thinking]")).to_contain_text("Check the file.")
    expect(feed.locator("[data-type=assistant]").first).to_contain_text("I will edit it.")
    bash = feed.locator(".tool.kind-execute")
    expect(bash.locator(".tool-input")).to_have_text("ls")
    expect(bash.locator(".tool-output")).to_have_text("app.ts")
    expect(bash.locator(".tool-status.ok .mark")).to_have_text("✓")
    expect(feed.locator(".tool.kind-edit .tool-input")).to_have_text("Edit src/app.ts")
    expect(feed.locator(".tool.kind-task .tool-output")).to_have_text("Report.")
    # The error shows its text, and the turn it ended failed with the reason kept.
    error = feed.locator("[data-type=error]")
    expect(error).to_contain_text(AUTH_ERROR)
    expect(error).to_contain_text("To sign in: claude /login")
    turn = feed.locator("[data-type=turn_complete]").last
    expect(turn.locator(".turn-status")).to_have_text("failed · auth")
    expect(feed.locator("[data-type=system]", has_text="Unrecognized")).to_have_count(0)

    # A later session in the same workspace, cancelled: the panel follows it.
    result = ingest_acp(server, (ACP / "schema-kinds.jsonl").read_bytes())
    assert result["status"] == "stopped" and result["rejected"] == 0
    expect(feed.locator("[data-type=user]").first).to_contain_text(
        "What is wrong in this screenshot?", timeout=10_000
    )
    prompt = feed.locator("[data-type=user]").first
    expect(prompt.locator(".attachment")).to_have_text(re.compile(r"^Image image/png · \d+ B$"))
    expect(prompt.locator(".text")).not_to_contain_text("[image]")
    expect(feed.locator(".sys-mode")).to_contain_text("Mode: Code")
    expect(feed.locator(".sys-notice")).to_contain_text("MCP server unavailable")
    expect(feed.locator(".tool.kind-execute .tool-output")).to_contain_text("passed")
    last = feed.locator("[data-type=turn_complete]").last
    expect(last.locator(".turn-status")).to_have_text("stopped · cancelled")
    expect(last.locator(".turn-tokens")).to_have_attribute(
        "title", re.compile("context 53k of 200k")
    )


def stored_chunk(number: int, content: dict[str, object]) -> bytes:
    """A client's stored update (Multica's `{timestamp, update}`), numbered by the client."""
    update = {"sessionUpdate": "agent_message_chunk", "content": content}
    record = {
        "timestamp": "2026-02-20T10:00:04Z",
        "sequenceNumber": number,
        "update": {"sessionId": "stored-1", "update": update},
    }
    return json.dumps(record).encode() + b"\n"


def test_stored_chunks_in_order_an_image_as_a_chip_and_a_denial(
    ext: Extension, server_factory: Any
) -> None:
    server = server_factory(port_outside_the_range())
    png = "iVBORw0KGgo" + "A" * 89  # 75 bytes once decoded
    body = b"".join([
        stored_chunk(100, {"type": "text", "text": "one "}),
        stored_chunk(102, {"type": "text", "text": "three"}),
        stored_chunk(101, {"type": "text", "text": "two "}),
        stored_chunk(103, {"type": "image", "mimeType": "image/png", "data": png}),
    ])  # fmt: skip
    assert ingest_acp(server, body)["rejected"] == 0
    panel = ext.open_panel()
    ext.use_port(panel, server.port)
    reply = panel.locator(".feed [data-type=assistant]")
    expect(reply.locator(".text")).to_have_text("one two three", timeout=10_000)
    expect(reply.locator(".attachment")).to_have_text("Image image/png · 75 B")
    expect(panel.locator(".feed img")).to_have_count(0)  # the image itself is never loaded

    # A later session: a call refused by a permission rule says why on its card.
    assert ingest_acp(server, (ACP / "permission-denied.jsonl").read_bytes())["rejected"] == 0
    card = panel.locator(".feed .tool.kind-execute")
    expect(card.locator(".tool-denial")).to_have_text("Denied by rule Bash(rm:*)", timeout=10_000)
    expect(card.locator(".tool-status.error .mark")).to_have_text("✗")
    expect(card.locator(".tool-output")).to_have_text("Permission to use Bash has been denied.")
