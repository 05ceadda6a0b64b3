"""Startup metadata scans give what a full parse of the same windows gave (Claude and Codex)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sidemirror.sources.claude.meta import agent_session_id, read_meta
from sidemirror.sources.claude.parser import ClaudeParser
from sidemirror.sources.codex.head import read_head as codex_index
from sidemirror.sources.codex.parser import CodexParser
from sidemirror.sources.files.tailer import read_edge_records

from tests.harness.paths import FIXTURES

CLAUDE = sorted((FIXTURES / "claude").rglob("*.jsonl"))
MAINS = [p for p in CLAUDE if not p.name.startswith("agent-")]
AGENTS = [p for p in CLAUDE if p.name.startswith("agent-")]


def full_parse_meta(path: Path) -> tuple[str, str | None, str | None, str | None] | None:
    """The previous index: every record of the first and last 64 KiB through ClaudeParser."""
    head, tail = ClaudeParser(), ClaudeParser()
    for record in read_edge_records(path, from_end=False):
        head.feed(record)
    for record in read_edge_records(path, from_end=True):
        tail.feed(record)
    cwd = head.cwd or tail.cwd
    if cwd is None:
        return None
    title = tail.title or head.title or head.first_prompt
    return cwd, title, head.started_at, tail.git_branch or head.git_branch


def meta(path: Path) -> tuple[str, str | None, str | None, str | None] | None:
    m = read_meta(path)
    return None if m is None else (m.cwd, m.title, m.started_at, m.branch)


@pytest.mark.parametrize("path", MAINS, ids=lambda p: p.name)
def test_fixture_transcripts_match_a_full_parse(path: Path) -> None:
    assert meta(path) == full_parse_meta(path)
    assert meta(path) is not None


def lines(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def rec(kind: str, **extra: Any) -> dict[str, Any]:
    base = {"type": kind, "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z", "gitBranch": "main"}
    return {**base, **extra}


def prompt(text: str, **extra: Any) -> dict[str, Any]:
    return rec("user", message={"role": "user", "content": text}, **extra)


def filler(n: int, size: int = 2000) -> list[dict[str, Any]]:
    text = {"type": "text", "text": "x" * size}
    return [rec("assistant", message={"role": "assistant", "content": [text]})] * n


@pytest.mark.parametrize(
    "records",
    [
        # Big file: injected context, a tool result and an echo before the real prompt; the
        # branch changes at the end; a custom title is appended last.
        [
            prompt("<command-name>/init</command-name>", isMeta=True),
            rec("user", message={"role": "user", "content": [{"type": "tool_result"}]}),
            prompt("<local-command-stdout>hi</local-command-stdout>"),
            prompt("fix the parser, my key is sk-ant-api03-" + "a" * 90),
            *filler(60),
            rec("assistant", gitBranch="feature/x", message={"role": "assistant", "content": []}),
            {"type": "custom-title", "customTitle": "Parser fix"},
        ],
        # Older layout: summaries first (no cwd, no timestamp), then a long session.
        [
            {"type": "summary", "summary": "Old summary", "leafUuid": "a"},
            {"type": "summary", "summary": "Newer summary", "leafUuid": "b"},
            prompt("hello"),
            *filler(80),
        ],
        # A first record larger than the small head: the scan grows to find cwd and prompt.
        [
            {"type": "file-history-snapshot", "snapshot": {"blob": "y" * 40000}},
            prompt("after a big snapshot"),
            *filler(40),
        ],
        # No cwd anywhere in the windows: not indexable yet.
        [{"type": "summary", "summary": "s"}, *([{"type": "progress", "p": "z" * 3000}] * 50)],
        # A slash command as the first prompt, small file (read once).
        [prompt("<command-name>/review</command-name><command-args>pr 7</command-args>")],
        # Sidechain prompts never title the session.
        [prompt("sub task", isSidechain=True), prompt("real ask"), *filler(3)],
        # Outside git the branch is "" on every line; here one early line names one.
        [
            prompt("ask", gitBranch="feat"),
            *[{**r, "gitBranch": ""} for r in filler(60)],
            {"type": "custom-title", "customTitle": "t", "gitBranch": ""},
        ],
    ],
    ids=["big", "summaries", "huge-first-record", "no-cwd", "slash", "sidechain", "no-branch"],
)
def test_synthetic_transcripts_match_a_full_parse(tmp_path: Path, records: list[Any]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(lines(records))
    assert meta(path) == full_parse_meta(path)


def test_a_partial_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(lines([prompt("one")]) + json.dumps(rec("custom-title"))[:30])
    assert meta(path) == full_parse_meta(path) == ("/w", "one", "2026-01-01T00:00:00Z", "main")


@pytest.mark.parametrize("path", AGENTS, ids=lambda p: p.name)
def test_agent_session_id_is_the_first_recorded(path: Path) -> None:
    expected = next(
        r["sessionId"]
        for r in read_edge_records(path, from_end=False, max_bytes=16384)
        if isinstance(r, dict) and isinstance(r.get("sessionId"), str)
    )
    assert agent_session_id(path) == expected


def codex_full_parse(path: Path) -> tuple[Any, ...] | None:
    head = CodexParser()
    for record in read_edge_records(path, from_end=False):
        head.feed(record)
    if head.cwd is None:
        return None
    return head.session_id, head.cwd, head.git_branch, head.title, head.started_at


@pytest.mark.parametrize("path", sorted((FIXTURES / "codex").glob("rollout-*.jsonl")))
def test_codex_index_matches_a_full_parse(path: Path, tmp_path: Path) -> None:
    head = codex_index(path)
    assert head is not None
    got = (head.session_id, head.cwd, head.git_branch, head.title, head.started_at)
    assert got == codex_full_parse(path)
    # An early rollout: a bare meta line first, bare items after it.
    early = tmp_path / "rollout-early.jsonl"
    shutil.copyfile(path, early)
    early.write_text(
        lines(
            [
                {"id": "s1", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/e"},
                {"type": "message", "role": "user", "content": [{"text": "early ask"}]},
            ]
        )
    )
    head = codex_index(early)
    assert head is not None
    got = (head.session_id, head.cwd, head.git_branch, head.title, head.started_at)
    assert got == codex_full_parse(early)
