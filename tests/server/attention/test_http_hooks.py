"""Claude Code HTTP hooks against a real server: `sidemirror hooks install --transport http`
writes the entries, and each test posts exactly what Claude Code posts for such an entry (its
`url`, its `headers`, `Content-Type: application/json`, the hook's JSON as the body; hooks
reference, "HTTP hook fields"), with recorded events (tests/fixtures/hooks/).
docs/security.md, "HTTP hooks", lists these tests beside the rules they hold."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from sidemirror.hooks.http_hooks import HttpTarget

from tests.harness.cli import run_cli
from tests.harness.server import Reply, Server
from tests.harness.waiting import wait_until
from tests.server.attention.hook_support import SESSION, event
from tests.server.web.test_security_part2 import NOBODY, curl_as


def _install(server: Server, project: Path, home: Path) -> dict[str, Any]:
    """`hooks install --transport http` for this server; our PreToolUse entry."""
    done = run_cli(
        "hooks", "install", "--project", str(project), "--transport", "http",
        "--data-dir", str(server.data), "--port", str(server.port), home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    entry: dict[str, Any] = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    assert entry["type"] == "http"
    permission = settings["hooks"]["PermissionRequest"][0]["hooks"][0]
    assert permission["type"] == "command"  # deciding stays with the command hook
    return entry


def _post_as_claude_code(server: Server, entry: dict[str, Any], payload: Any) -> Reply:
    """What Claude Code sends for an HTTP hook entry: POST to its url with its headers."""
    assert entry["url"].startswith(server.base)
    path = entry["url"][len(server.base) :]
    headers = {**entry["headers"], "Content-Type": "application/json"}
    return server.exchange("POST", path, json.dumps(payload).encode(), headers)


@pytest.fixture
def served(tmp_path: Path) -> Any:
    with Server(tmp_path / "server", log_level="debug", access_log=True) as server:
        yield server


def test_an_http_hook_event_sets_the_state_and_answers_an_empty_output(
    served: Server, tmp_path: Path
) -> None:
    entry = _install(served, tmp_path / "project", tmp_path)
    reply = _post_as_claude_code(served, entry, event("UserPromptSubmit"))
    assert (reply.status, reply.json_or_text()) == (200, {})  # no output: Claude Code goes on

    def running() -> bool:
        rows = served.get("/api/attention")["sessions"]
        return any(r["session"] == SESSION and r["state"] == "running" for r in rows)

    wait_until(running, what="the session running, as the hook said")


def test_the_hook_secret_opens_nothing_else_and_nothing_else_opens_its_route(
    served: Server, tmp_path: Path
) -> None:
    entry = _install(served, tmp_path / "project", tmp_path)
    secret = entry["headers"]["X-Sidemirror-Hook"]
    body = json.dumps(event("UserPromptSubmit")).encode()
    json_type = {"Content-Type": "application/json"}
    as_hook = {"X-Sidemirror-Hook": secret, **json_type}
    as_bearer = {"Authorization": f"Bearer {secret}", **json_type}
    for headers in (as_hook, as_bearer):
        for method, path in [
            ("GET", "/api/workspaces"),
            ("GET", "/api/attention"),
            ("GET", "/api/decisions"),
            ("POST", "/api/hooks/claude"),
            ("POST", "/api/decisions/0123456789abcdef"),
            ("POST", "/api/pair/code"),
            ("POST", "/api/ticket"),
        ]:
            got = served.exchange(method, path, body if method == "POST" else None, headers)
            assert got.status == 401, (method, path, headers.keys(), got.text())
    route = "/api/hooks/claude/http"
    with_token = {"Authorization": f"Bearer {served.token}", **json_type}
    for headers in (with_token, json_type, {"X-Sidemirror-Hook": secret + "x", **json_type}):
        assert served.exchange("POST", route, body, headers).status == 401


def test_a_permission_request_over_http_is_refused_and_nothing_waits(
    served: Server, tmp_path: Path
) -> None:
    entry = _install(served, tmp_path / "project", tmp_path)
    reply = _post_as_claude_code(served, entry, event("PermissionRequest"))
    # Not 2xx: Claude Code carries on as if the hook were not there, and the terminal asks.
    assert reply.status == 400
    assert reply.json_or_text()["error"]["code"] == "command_hook_only"
    assert served.get("/api/decisions")["decisions"] == []


def test_the_hook_secret_reaches_no_answer_file_or_log_but_its_own(
    served: Server, tmp_path: Path
) -> None:
    entry = _install(served, tmp_path / "project", tmp_path)
    secret = entry["headers"]["X-Sidemirror-Hook"]
    assert _post_as_claude_code(served, entry, event("UserPromptSubmit")).status == 200
    assert secret not in json.dumps(served.health())
    for runtime in served.runtime_dir.glob("*.json"):
        assert secret not in runtime.read_text()
    wait_until(lambda: "POST /api/hooks/claude/http" in served.requests(), what="access log")
    assert secret not in served.stderr() + served.stdout()
    status = run_cli("hooks", "status", "--project", str(tmp_path / "project"), home=tmp_path)
    assert "HTTP hooks to 127.0.0.1" in status.stdout and secret not in status.stdout
    kept = served.data / "hook_secret"
    assert kept.read_text().strip() == secret and kept.stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_another_os_user_with_the_hook_secret_is_refused(served: Server, tmp_path: Path) -> None:
    entry = _install(served, tmp_path / "project", tmp_path)
    args = ("-X", "POST", "-H", "Content-Type: application/json")
    args += ("-H", f"X-Sidemirror-Hook: {entry['headers']['X-Sidemirror-Hook']}")
    args += ("--data", json.dumps(event("UserPromptSubmit")))
    status, body = asyncio.run(curl_as(NOBODY, entry["url"], *args))
    assert status == 403 and "other_user" in body
    rows = served.get("/api/attention")["sessions"]
    assert all(r["session"] != SESSION for r in rows)  # nothing was recorded


def test_serve_warns_when_the_http_hooks_post_to_another_port(tmp_path: Path) -> None:
    server = Server(tmp_path / "server")
    with server:
        pass  # its first start makes the data dir's hook secret
    settings = server.tmp / ".claude" / "settings.json"  # the server's HOME is its folder
    settings.parent.mkdir(parents=True)
    elsewhere = HttpTarget(server.port, (server.data / "hook_secret").read_text().strip())
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [elsewhere.entry()]}]}}))
    with server:  # a fresh port: no longer the one the hooks post to
        assert server.port != elsewhere.port

        def warned() -> bool:
            return f"post to 127.0.0.1:{elsewhere.port}, but this server listens on" in (
                server.stderr()
            )

        wait_until(warned, what="the warning that the HTTP hooks post elsewhere")
        assert elsewhere.secret not in server.stderr()
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [elsewhere.entry()]}]}}))
    other = Server(tmp_path / "other", port=elsewhere.port)  # HOME elsewhere: nothing to say
    with other:
        assert "HTTP hooks" not in other.stderr()
