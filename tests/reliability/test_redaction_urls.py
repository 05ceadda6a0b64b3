"""Secrets inside URLs: every secret kind, placed in a URL the ways a browser tool or an agent
meets them (a secret query parameter, a fragment, the userinfo, a path segment, a URL nested
percent-encoded in a login's `next=`), and each URL put in every field a client can send:
an activity entry's arguments (first, and after a flag), its command string, `url`, `result`,
`error`, element refs and request id, and a session's title, text, thinking, tool input and
tool output. A real server; every output is read back, and no secret may be seen in any form.

It also checks what the user sees around the secret: a URL argument is never taken for a
header *name* (a URL ending in `…=token` or `…SECRET` used to be passed through whole and the
innocent argument after it hidden instead), so the next argument stays as it was sent.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

from tests.harness.server import Server
from tests.harness.waiting import wait_until

from .report import record
from .test_redaction_corpus import CORPUS
from .test_redaction_everywhere import (
    Mcp,
    ingest,
    request,
    sse_until_snapshot_or_idle,
    workspace_id,
)

# One secret of each kind the redactor knows, and the issue's own example.
KINDS: list[tuple[str, str]] = [
    next((rule, secret) for rule, secret, _ in CORPUS if rule == kind)
    for kind in dict.fromkeys(rule for rule, _, _ in CORPUS)
] + [("query_secret", "abc123SECRET")]
# Kinds a token rule recognises by their own shape, wherever they sit in a URL.
SELF_EVIDENT = frozenset({"anthropic_key", "openai_key", "github_token", "stripe_key",
                          "google_api_key", "aws_access_key", "jwt"})  # fmt: skip
WS_DIR = "/home/dev/url-secrets"
TITLES_DIR = "/home/dev/url-titles"
NEXT = "next"


def nested(inner: str) -> str:
    """`inner` as the percent-encoded `next=` of a login URL."""
    return "https://shop.test/login?next=" + urllib.parse.quote(inner, safe="")


def urls(rule: str, secret: str) -> list[str]:
    """The URLs that carry `secret`. Several end in a secret-like word (`…=token`, `/password`),
    as OAuth and reset links do: exactly what used to be read as a header name."""
    out = [
        f"https://shop.test/login?next=/cart&token={secret}",
        f"https://shop.test/oauth/authorize?access_token={secret}&response_type=token",
        f"https://shop.test/cb#id_token={secret}&state=/account/password",
        nested(f"https://app.test/cb?api_key={secret}&x=1"),
    ]
    if rule == "url_credentials":
        out.append(f"https://deploy:{secret}@git.shop.test/r.git?next=/settings/token")
    if rule == "slack_token":
        out.append(f"https://hooks.slack.com/services/{secret}")
    if rule in SELF_EVIDENT:
        out += [
            f"https://shop.test/keys/{secret}/view?mode=secret",
            f"https://shop.test/search?q={secret}&type=access_token",
            nested(f"https://app.test/?q={secret}"),
        ]
    return out


CASES: list[tuple[str, str, str]] = [
    (rule, secret, url) for rule, secret in KINDS for url in urls(rule, secret)
]


def activity_entries(url: str) -> list[dict[str, Any]]:
    return [
        {"command": "goto", "args": [url, NEXT]},
        {"command": "open", "args": ["--url", url, "--wait", "load"]},
        {"command": f"goto {url} {NEXT}"},
        {"type": "navigation", "url": url},
        {"command": "click", "args": ["@e2"], "url": url, "result": f"navigated to {url}",
         "error": f"timeout waiting for {url}", "request_id": url,
         "refs": [{"ref": "e2", "role": "link", "name": url, "selector": f'a[href="{url}"]'}]},
    ]  # fmt: skip


def session_lines(url: str, n: int) -> list[dict[str, Any]]:
    return [
        {"type": "user", "content": f"open {url}"},  # the first one is the session's title
        {"type": "assistant", "content": f"Opening {url} now."},
        {"type": "assistant_delta", "segment_id": f"s{n}", "text": f"at {url}"},
        {"type": "thinking", "content": f"the link {url} has the key"},
        {"type": "tool_use", "tool_use_id": f"t{n}", "name": "browser_navigate",
         "input": json.dumps({"url": url})},
        {"type": "tool_use", "tool_use_id": f"b{n}", "name": "Bash",
         "input": f"curl -sL '{url}'"},
        {"type": "tool_result", "tool_use_id": f"t{n}", "name": "browser_navigate",
         "output": f"Page URL: {url}\nTitle: Shop"},
    ]  # fmt: skip


def claude_transcripts(server: Server) -> int:
    """One Claude Code transcript per URL, titled by it (a custom title, and the first prompt)."""
    project = server.claude / "-home-dev-url-titles"
    project.mkdir(parents=True)
    for n, (_r, _s, url) in enumerate(CASES):
        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, str(n)))
        base = {"cwd": TITLES_DIR, "sessionId": sid, "timestamp": "2026-12-01T10:00:00.000Z"}
        lines = [
            {**base, "type": "user", "uuid": f"{sid[:30]}u", "parentUuid": None,
             "message": {"role": "user", "content": f"open {url}"}},
            {"type": "custom-title", "customTitle": f"Check {url}", "sessionId": sid},
        ]  # fmt: skip
        (project / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return len(CASES)


def forms(secret: str) -> set[str]:
    """Every way `secret` could show: whole, JSON-escaped, percent-encoded, or a long prefix."""
    out = {secret, json.dumps(secret)[1:-1], urllib.parse.quote(secret, safe="")}
    if len(secret) >= 24:
        out |= {secret[:16], urllib.parse.quote(secret, safe="")[:16]}
    return out


def leaks(text: str) -> list[str]:
    out = []
    for rule, secret in KINDS:
        for form in forms(secret):
            at = text.find(form)
            if at >= 0:
                out.append(f"{rule}: …{text[max(0, at - 120) : at + len(form) + 40]}…")
                break
    return out


async def test_no_secret_inside_a_url_survives_in_any_field(tmp_path: Path) -> None:
    assert len({rule for rule, _ in KINDS}) >= 15 and len(CASES) >= 80
    server = Server(tmp_path)
    titled = claude_transcripts(server)
    server.start()
    seen: dict[str, str] = {}
    try:
        answers = []
        for _rule, _secret, url in CASES:
            for entry in activity_entries(url):
                status, text = request(server, "POST", "/api/activity", entry,
                                       {"Content-Type": "application/json"})  # fmt: skip
                assert status == 200, (entry, text)
                answers.append(text)
        seen["activity_answers"] = "\n".join(answers)
        sessions = {f"u{n}": url for n, (_r, _s, url) in enumerate(CASES)}
        for n, (session, url) in enumerate(sessions.items()):
            result = ingest(server, "events", session_lines(url, n), WS_DIR, session)
            assert result["rejected"] == 0, result
        ws = workspace_id(WS_DIR)
        wait_until(
            lambda: (s := json.loads(request(server, "GET", f"/workspace/{ws}/sessions")[1]))
            and len(s["sessions"]) >= len(sessions) and s,
            30, "every session listed",
        )  # fmt: skip
        titles = wait_until(
            lambda: (s := json.loads(request(
                server, "GET", f"/workspace/{workspace_id(TITLES_DIR)}/sessions")[1]))
            and len(s["sessions"]) >= titled and s,
            30, "every titled session listed",
        )  # fmt: skip
        seen["titles"] = json.dumps([s["title"] for s in titles["sessions"]])
        assert all(s["title"] for s in titles["sessions"]), titles["sessions"][:2]
        snapshots, full = [], []
        for session in sessions:
            query = urllib.parse.urlencode({"session": session, "limit": 1000})
            status, body = request(server, "GET", f"/workspace/{ws}/session?{query}")
            assert status == 200, body
            snapshots.append(body)
            for item in json.loads(body)["items"]:
                item_path = f"/workspace/{ws}/session/items/{urllib.parse.quote(item['id'])}"
                full.append(request(server, "GET", f"{item_path}?session={session}")[1])
        seen["snapshots"], seen["full_items"] = "\n".join(snapshots), "\n".join(full)
        mcp = Mcp(server, "url-test")
        mcp.call("sidemirror_get_activity", {"limit": 1000})
        seen["mcp"] = "\n".join(mcp.answers)
        replay = sse_until_snapshot_or_idle(server)
        seen["activity_replay"] = replay
        entries = [json.loads(line[6:]) for line in replay.splitlines()
                   if line.startswith("data: {")]  # fmt: skip
    finally:
        server.stop()
    seen["server_stderr"] = server.stderr()
    seen["data_dir_files"] = "".join(
        p.read_text(errors="replace") for p in server.data.rglob("*") if p.is_file()
    )
    found = {where: leaks(text) for where, text in seen.items()}
    assert not any(found.values()), {k: v for k, v in found.items() if v}

    # What the user reads: the URL's secret masked in place, every other argument as sent.
    gotos = [e for e in entries if e["command"] == "goto"]
    assert len(gotos) == 2 * len(CASES), len(gotos)
    for entry in gotos:
        assert entry["args"][-1] == NEXT, entry["args"]
        assert entry["args"][0].startswith("https://") and "[REDACTED:" in entry["args"][0], entry
    opens = [e["args"] for e in entries if e["command"] == "open"]
    assert all(a[0] == "--url" and a[2:] == ["--wait", "load"] for a in opens), opens[:3]
    for rule in SELF_EVIDENT | {"slack_token", "query_secret", "url_credentials"}:
        assert f"[REDACTED:{rule}]" in seen["activity_replay"], rule
    for where in ("snapshots", "full_items", "titles", "mcp", "activity_replay"):
        assert "[REDACTED:" in seen[where], where
    record("redaction inside URLs", {"kinds": len({r for r, _ in KINDS}), "urls": len(CASES),
           "places": sorted(seen), "leaks": 0}, trials=len(CASES))  # fmt: skip
