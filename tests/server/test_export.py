"""`sidemirror export`: a real `serve` process on recorded Claude Code transcripts (one with a
rewind, one with a sub-agent), exported through the real CLI in every format."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.harness.cli import clean_env
from tests.harness.paths import FIXTURES
from tests.harness.server import Server
from tests.server.sources.claude.test_live import SID as AGENT_SID
from tests.server.sources.claude.test_live import setup_project
from tests.unit.sources.claude.test_branches import NEW_PROMPT, TOOL_HEAVY, lines, rewind_lines

SECRET = "sk-ant-api03-" + "Zq7" * 12
HOSTILE = '<script>alert(1)</script><img src="https://evil.example/x.png" onerror="alert(2)">'
LINK = "https://example.com/docs?a=1&b=2"
SID = "tool_heavy"  # the session id of the spotter transcript (its file name)
EDITS = FIXTURES / "claude" / "flat-agents" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"


def transcript(root: Path) -> None:
    """The spotter session with a rewind, then a prompt holding hostile HTML and a key, and a
    reply with a link; and the sub-agent session beside it."""
    base = lines(TOOL_HEAVY)
    records = base + rewind_lines(base, compact_after=False)
    env = {k: records[-1][k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version")}
    ts = records[-1]["timestamp"]
    image = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}
    said = [{"type": "text", "text": f"{HOSTILE} and my key {SECRET}"}]
    prompt = {"role": "user", "content": [*said, {"type": "image", "source": image}]}
    reply = {"role": "assistant", "model": "claude-opus-4-6", "id": "msg_x", "type": "message"}
    reply |= {"content": [{"type": "text", "text": f"See {LINK} — {HOSTILE}"}]}
    reply |= {"stop_reason": "end_turn"}
    records.append({**env, "parentUuid": records[-1]["uuid"], "type": "user",
                    "message": prompt, "uuid": "9e100000-0000-4000-8000-000000000001",
                    "timestamp": ts})  # fmt: skip
    records.append({**env, "parentUuid": records[-1]["uuid"], "type": "assistant",
                    "message": reply, "uuid": "9e100000-0000-4000-8000-000000000002",
                    "timestamp": ts})  # fmt: skip
    project = root / "projects" / "spotter"
    project.mkdir(parents=True)
    (project / f"{SID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    setup_project(root, "turn-2")
    flat = root / "projects" / "flat"
    flat.mkdir()
    shutil.copyfile(EDITS, flat / EDITS.name)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int, str]]:
    tmp = tmp_path_factory.mktemp("export")
    transcript(tmp / "claude")
    with Server(tmp, claude_dir=tmp / "claude" / "projects", token=None, log_level=None) as srv:
        token = json.loads(next((tmp / "run").glob("*.json")).read_text())["token"]
        yield tmp, srv.port, token


def export(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "sidemirror", "export", *args]
    cmd += ["--runtime-dir", str(tmp / "run"), "--data-dir", str(tmp / "data")]
    return subprocess.run(
        cmd, env=clean_env(tmp, **env), capture_output=True, text=True, timeout=120,
        encoding="utf-8",
    )  # fmt: skip


def get(port: int, token: str, path: str, **params: object) -> Any:
    url = f"http://127.0.0.1:{port}{path}?{urllib.parse.urlencode(params)}"
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def server_items(port: int, token: str, sid: str) -> list[dict[str, Any]]:
    """Every item of the session, whole, as the server answers them one by one."""
    ws = next(
        w["id"]
        for w in get(port, token, "/api/workspaces")["workspaces"]
        if any(
            s["id"] == sid for s in get(port, token, f"/workspace/{w['id']}/sessions")["sessions"]
        )
    )
    snap = get(port, token, f"/workspace/{ws}/session", session=sid, limit=10000)
    return [
        get(port, token, f"/workspace/{ws}/session/items/{i['id']}", session=sid)
        for i in snap["items"]
    ]


def test_jsonl_is_the_servers_items_whole_oldest_first(server: tuple[Path, int, str]) -> None:
    tmp, port, token = server
    done = export(tmp, "tool_h", "--format", "jsonl", "--page-size", "7")  # an id's prefix
    assert done.returncode == 0, done.stderr
    exported = [json.loads(line) for line in done.stdout.splitlines()]
    items = server_items(port, token, SID)
    assert len(items) > 4 * 7  # several pages: the export paged back with before=
    assert exported == items
    assert any(i.get("abandoned_after") for i in exported)
    assert SECRET not in done.stdout


def test_markdown_holds_every_prompt_and_reply(server: tuple[Path, int, str]) -> None:
    tmp, port, token = server
    out = tmp / "session.md"
    done = export(tmp, SID, "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    items = server_items(port, token, SID)
    said = [i["content"] for i in items if i["type"] in ("user", "assistant")]
    assert said and all(s in text for s in said)
    results = [i["output"] for i in items if i["type"] == "tool_result"]
    assert max(map(len, results)) > 500  # longer than the server's snapshots show
    assert all(r in text for r in results)  # whole by default
    assert text.index(said[0]) < text.index(said[-1])  # oldest first
    assert "Abandoned branch" in text and NEW_PROMPT in text
    assert "<details><summary>Thinking</summary>" in text or "thinking" not in {
        i["type"] for i in items
    }
    assert "Turn " in text and " out tokens" in text
    turns = [i for i in items if i["type"] == "turn_complete" and not i["parent_tool_use_id"]]
    output = sum(t["output_tokens"] for t in turns)
    assert f"- Totals: {len(items)} items, " in text and f"{output:,} output" in text
    assert SECRET not in text and "my key [REDACTED:" in text  # redacted, not dropped
    assert "*Attachments: image/png (16 bytes)*" in text


def test_a_sub_agents_items_nest_under_its_task(server: tuple[Path, int, str]) -> None:
    tmp, port, token = server
    done = export(tmp, AGENT_SID[:8], "--format", "md")
    assert done.returncode == 0, done.stderr
    nested = [i for i in server_items(port, token, AGENT_SID) if i["parent_tool_use_id"]]
    assert nested
    quoted = [line for line in done.stdout.splitlines() if line.startswith("> ")]
    said = [i["content"] for i in nested if i["type"] == "assistant"]
    assert said and all(f"> {s.splitlines()[0]}" in quoted for s in said)
    assert "> *Sub-agent*" in quoted


def test_a_turn_reads_the_agents_own_duration(server: tuple[Path, int, str]) -> None:
    # turn-2's turn closed at end_turn after 547.8 s of wall time; Claude Code's own
    # `turn_duration` (the session's last item, pages after its turn) says 529.9 s.
    tmp, port, token = server
    items = server_items(port, token, AGENT_SID)
    (measured,) = [i for i in items if i["type"] == "turn_duration"]
    (turn,) = [i for i in items if i["seq"] == measured["turn_seq"]]
    assert (turn["type"], turn["duration_ms"]) == ("turn_complete", 547831)
    for fmt in ("md", "html"):
        done = export(tmp, AGENT_SID[:8], "--format", fmt, "--page-size", "7")
        assert done.returncode == 0, done.stderr
        assert "529.9 s" in done.stdout and "547.8 s" not in done.stdout
        assert "turn_duration" not in done.stdout  # read on its turn, not as a line
    done = export(tmp, AGENT_SID[:8], "--format", "jsonl")
    assert [json.loads(line) for line in done.stdout.splitlines()] == items  # the data, as sent


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_html_is_offline_and_escapes_every_text(server: tuple[Path, int, str]) -> None:
    tmp, _, _ = server
    out = tmp / "session.html"
    done = export(tmp, SID, "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = Page()
    page.feed(out.read_text())
    page.close()
    names = {tag for tag, _ in page.tags}
    assert "script" not in names and "img" not in names and "details" in names
    assert not [a for _, a in page.tags if "onerror" in a or "src" in a]
    links = [a for tag, a in page.tags if tag == "a"]
    assert {"href": LINK, "rel": "noopener noreferrer"} in links
    assert all(set(a) == {"href", "rel"} and a["rel"] == "noopener noreferrer" for a in links)
    text = "".join(page.text)
    assert HOSTILE in text  # shown as text, whole
    assert SECRET not in out.read_text()
    assert "Abandoned branch" in text and NEW_PROMPT in text


def test_html_shows_an_edits_lines_as_plus_and_minus(server: tuple[Path, int, str]) -> None:
    tmp, _, _ = server
    done = export(tmp, EDITS.stem[:6], "--format", "html")
    assert done.returncode == 0, done.stderr
    added: list[str] = []

    class Lines(HTMLParser):
        inside = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.inside = ("class", "add") in attrs

        def handle_data(self, data: str) -> None:
            if self.inside:
                added.append(data)
            self.inside = False

    Lines().feed(done.stdout)
    assert '+    print("Hello, World!")' in added


def test_max_chars_cuts_with_a_mark_and_a_bad_session_writes_nothing(
    server: tuple[Path, int, str],
) -> None:
    tmp, port, token = server
    # A terminal whose locale cannot encode the text still gets all of it, in UTF-8.
    done = export(tmp, SID, "--format", "md", "--max-chars", "50", PYTHONIOENCODING="ascii")
    assert done.returncode == 0, done.stderr
    assert f"See {LINK} — " in done.stdout
    longest = max(
        (i["output"] for i in server_items(port, token, SID) if i["type"] == "tool_result"),
        key=len,
    )
    assert f"{longest[:50]}\n[… cut: {len(longest) - 50} more characters]" in done.stdout
    assert longest not in done.stdout
    out = tmp / "none.html"
    missing = export(tmp, "no-such-session", "-o", str(out))
    assert missing.returncode == 1 and "no session 'no-such-session'" in missing.stderr
    assert not out.exists() and not [p for p in os.listdir(tmp) if p.endswith(".part")]


def test_the_session_is_found_by_prefix_in_a_workspace_or_the_choice_is_said(
    server: tuple[Path, int, str],
) -> None:
    tmp, _, _ = server
    cwd = lines(TOOL_HEAVY)[3]["cwd"]
    found = export(tmp, "tool", "--workspace", cwd, "--format", "jsonl")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout.splitlines()[0])["type"] == "user"
    elsewhere = export(tmp, "tool", "--workspace", "/no/such/dir")
    assert elsewhere.returncode == 1 and not elsewhere.stdout
    assert "no workspace '/no/such/dir'" in elsewhere.stderr
    several = export(tmp, "")  # every session's id starts with ""
    assert several.returncode == 1 and not several.stdout
    assert "3 sessions fit ''" in several.stderr and SID in several.stderr


def download(
    port: int, token: str, sid: str, auth: bool = True, **params: str
) -> tuple[int, Any, bytes]:
    """`GET …/session/export` of the session `sid`: status, headers and body."""
    ws = next(
        w["id"]
        for w in get(port, token, "/api/workspaces")["workspaces"]
        if any(
            s["id"] == sid for s in get(port, token, f"/workspace/{w['id']}/sessions")["sessions"]
        )
    )
    query = urllib.parse.urlencode({"session": sid, **params})
    url = f"http://127.0.0.1:{port}/workspace/{ws}/session/export?{query}"
    headers = {"Authorization": f"Bearer {token}"} if auth else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


@pytest.mark.parametrize("fmt", ["jsonl", "md", "html"])
def test_the_export_route_downloads_what_the_cli_writes(
    server: tuple[Path, int, str], fmt: str
) -> None:
    tmp, port, token = server
    cli = export(tmp, SID, "--format", fmt)
    assert cli.returncode == 0, cli.stderr
    status, headers, body = download(port, token, SID, format=fmt)
    assert status == 200
    assert headers["Content-Disposition"] == f'attachment; filename="sidemirror-{SID}.{fmt}"'
    assert headers["Content-Type"].endswith("; charset=utf-8")
    assert body.decode("utf-8") == cli.stdout
    assert SECRET.encode() not in body


def test_the_export_route_needs_the_token_and_says_what_is_wrong(
    server: tuple[Path, int, str],
) -> None:
    _, port, token = server
    assert download(port, token, SID, auth=False)[0] == 401
    status, _, body = download(port, token, SID, format="pdf")
    assert status == 400 and b"format must be html, md or jsonl" in body
    status, _, body = download(port, token, SID, max_chars="0")
    assert status == 400 and b"max_chars" in body
    cut = download(port, token, SID, format="md", max_chars="50")[2].decode()
    assert "[… cut: " in cut


class Blocks(HTMLParser):
    """The text of each item's block (`<div class="item…">` in `<main>`), in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[list[str]] = []
        self.depth = 0  # open <div>s inside the current block

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "div":
            return
        if self.depth == 0 and (dict(attrs).get("class") or "").split()[:1] == ["item"]:
            self.blocks.append([])
            self.depth = 1
        elif self.depth:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.blocks[-1].append(data)


def said_by(item: dict[str, Any]) -> list[str]:
    """What a reader must find of an item in its block: its own words, whole."""
    kind = item["type"]
    if kind in ("user", "assistant", "thinking"):
        return [item["content"]]
    if kind == "tool_use":
        return [item["name"], item.get("input") or ""]
    if kind == "tool_result":
        return [item["name"], item.get("output") or ""]
    if kind == "turn_complete":
        return [f"{item['input_tokens']:,} in / {item['output_tokens']:,} out tokens"]
    if kind == "plan":
        return [str(e["content"]) for e in item.get("entries") or []]
    if kind == "error":
        return [item.get("message") or ""]
    return [item.get("content") or ""]


@pytest.mark.parametrize("sid", [SID, AGENT_SID, EDITS.stem])
def test_the_html_text_holds_every_item_whole_in_order(
    server: tuple[Path, int, str], sid: str
) -> None:
    tmp, port, token = server
    done = export(tmp, sid, "--format", "html")
    assert done.returncode == 0, done.stderr
    page = Blocks()
    page.feed(done.stdout)
    page.close()
    everything = server_items(port, token, sid)
    # A `turn_duration` is never a row (docs/protocol.md): its turn's line shows its figure.
    durations = {
        i["turn_seq"]: i["duration_ms"] for i in everything if i["type"] == "turn_duration"
    }
    items = [i for i in everything if i["type"] != "turn_duration"]
    texts = ["".join(block) for block in page.blocks]
    assert len(texts) == len(items) > 10  # one block per item, nothing left out or added
    for n, (item, text) in enumerate(zip(items, texts, strict=True)):
        for said in said_by(item):
            assert said in text, (n, item["type"], item["id"], said[:200], text[:400])
        if item["seq"] in durations:
            assert f"{durations[item['seq']] / 1000:.1f} s" in text, (n, text)
