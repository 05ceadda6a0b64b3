"""No secret of the redaction corpus reaches an export, in any format (issue 33).

The recorded transcript with a secret added to every string (test_redaction_everywhere.py's
`claude_transcript`), then a prompt and a reply carrying every secret of the corpus, on a real
server; `sidemirror export` writes it as HTML, Markdown and JSONL (whole text, the default),
and each output is searched for every secret: whole, JSON-escaped, or by a long prefix."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness.server import Server
from tests.server.test_export import export

from .report import record
from .test_redaction_corpus import CORPUS
from .test_redaction_everywhere import SECRETS, claude_transcript, context, leaks

FORMATS = ("html", "md", "jsonl")


def add_every_secret(path: Path) -> None:
    """A prompt and a reply, each carrying every text of the corpus."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line]
    last = records[-1]
    every = "\n".join(text for _, _, text in CORPUS)
    env = {
        k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version") if k in last
    }
    prompt = {
        **env,
        "type": "user",
        "uuid": "corpus-prompt",
        "parentUuid": last.get("uuid"),
        "timestamp": last["timestamp"],
        "message": {"role": "user", "content": every},
    }
    reply = {**env, "type": "assistant", "uuid": "corpus-reply", "parentUuid": "corpus-prompt",
             "timestamp": last["timestamp"],
             "message": {"role": "assistant", "id": "msg_corpus", "type": "message",
                         "model": "claude-opus-4-6", "stop_reason": "end_turn",
                         "content": [{"type": "text", "text": every}]}}  # fmt: skip
    with path.open("a") as fh:
        fh.write(json.dumps(prompt) + "\n" + json.dumps(reply) + "\n")


def test_no_secret_of_the_corpus_in_any_export_format(tmp_path: Path) -> None:
    server = Server(tmp_path, token=None, log_level=None, ready="ok")
    claude_transcript(server)
    (path,) = server.claude.glob("-home-dev-salted/*.jsonl")
    add_every_secret(path)
    written = path.read_text()
    assert all(secret in written for secret in SECRETS)  # every one goes in
    with server:
        outputs = {}
        for fmt in FORMATS:
            done = export(tmp_path, path.stem, "--format", fmt)
            assert done.returncode == 0, done.stderr
            outputs[fmt] = done.stdout
    for fmt, text in outputs.items():
        assert "[REDACTED:" in text, fmt  # the secrets' places are there, marked
        assert not leaks(text), (fmt, context(text))
    record(
        "export redaction",
        {"secrets": len(SECRETS), "formats": list(FORMATS), "leaks": 0},
        trials=len(FORMATS),
    )
