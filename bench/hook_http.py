"""What a hook adds to each tool call, per transport (issue 32), part of `--only hook`:

- HTTP hook (Claude Code 2.1.63+): the request Claude Code makes for our entry, exactly (POST of
  the recorded PreToolUse event to the entry's URL with its headers and
  `Content-Type: application/json`), each on a new connection, with the server up, and with
  nothing listening on the port (what the agent meets when the server is down);
- command hook: spawning the real `sidemirror hook` with the same event, server up, to its exit.

Claude Code runs hooks itself, so these are the added costs seen from its side; none of them is
measured inside Claude Code (not installed here).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hook_timing import EVENTS, SIDEMIRROR, summary_ms, timed
from peers import free_port

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
from sidemirror.hooks.http_hooks import target  # noqa: E402


def _event() -> bytes:
    return EVENTS.read_text().splitlines()[2].encode()  # a PreToolUse, as on every tool call


@contextlib.contextmanager
def _server(root: Path) -> Iterator[tuple[int, Path, Path]]:
    run, data, port = root / "http-run", root / "http-data", free_port()
    proc = subprocess.Popen(
        [SIDEMIRROR, "serve", "--port", str(port), "--runtime-dir", str(run),
         "--data-dir", str(data), "--claude-dir", str(root / "http-none"),
         "--codex-dir", str(root / "http-none")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(600):
            with contextlib.suppress(OSError):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/health")
                if json.loads(conn.getresponse().read()).get("status") == "ok":
                    break
            time.sleep(0.05)
        yield port, run, data
    finally:
        proc.terminate()
        proc.wait(10)


def _post_like_claude_code(entry: dict[str, Any], body: bytes, n: int) -> dict[str, float]:
    """Wall time of each POST (connect, send, answer read), a new connection each time."""
    url = entry["url"].removeprefix("http://")
    hostport, _, path = url.partition("/")
    host, _, port = hostport.rpartition(":")
    headers = {**entry["headers"], "Content-Type": "application/json"}
    samples, refused = [], 0
    for _ in range(n):
        start = time.perf_counter()
        conn = http.client.HTTPConnection(host, int(port), timeout=entry["timeout"])
        try:
            conn.request("POST", "/" + path, body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                raise RuntimeError(f"HTTP hook answered {resp.status}")
        except ConnectionRefusedError:
            refused += 1
        finally:
            conn.close()
        samples.append(time.perf_counter() - start)
    ordered = sorted(samples)  # sub-millisecond: kept to the microsecond
    out: dict[str, float] = {
        "p50_ms": round(ordered[len(ordered) // 2] * 1000, 3),
        "p90_ms": round(ordered[int(len(ordered) * 0.9) - 1] * 1000, 3),
        "n": len(ordered),
    }
    if refused:
        out["refused"] = refused
    return out


def instructions(cmd: list[str], stdin: bytes) -> float | None:
    """Millions of instructions `cmd` executes (valgrind callgrind's `I refs`): unlike time, a
    figure the machine's load does not move. None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        input=stdin, capture_output=True, check=False,
    )  # fmt: skip
    found = re.search(rb"Collected : (\d+)", done.stderr)
    return round(int(found.group(1)) / 1e6, 1) if found else None


def statusline_runs(run: Path, n: int) -> dict[str, float]:
    """`sidemirror statusline run` with the documented JSON, server up: spawn to exit (what
    Claude Code waits for before it shows the line; the report goes on in the background)."""
    payload = (ROOT / "tests" / "fixtures" / "statusline" / "claude-code-2.1.90.json").read_bytes()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        done = subprocess.run(
            [SIDEMIRROR, "statusline", "run", "--runtime-dir", str(run)],
            input=payload, capture_output=True, check=False,
        )  # fmt: skip
        samples.append(time.perf_counter() - start)
        if done.returncode != 0 or not done.stdout:
            raise RuntimeError(f"statusline run failed: {done.returncode} {done.stderr!r}")
    return summary_ms(samples)


def measure(root: Path, n: int = 200) -> dict[str, Any]:
    body = _event()
    empty = root / "http-empty"
    empty.mkdir()
    with _server(root) as (port, run, data):
        entry = target(data, port).entry()
        up = _post_like_claude_code(entry, body, n)
        hook = [SIDEMIRROR, "hook", "--runtime-dir"]
        command = timed([*hook, str(run)], body, max(10, n // 5))
        status_line = statusline_runs(run, max(10, n // 10))
        counts = {
            "python -c pass": instructions([sys.executable, "-c", "pass"], b""),
            "command hook, no server": instructions([*hook, str(empty)], body),
            "command hook, server up": instructions([*hook, str(run)], body),
        }
    down = _post_like_claude_code(entry, body, n)  # the same entry, nothing on its port now
    return {
        "HTTP hook, server up": up,
        "HTTP hook, server down (connection refused)": down,
        "command hook (`sidemirror hook`), server up": command,
        "status line (`sidemirror statusline run`), server up, to its exit": status_line,
        "instructions (millions, valgrind)": counts,
    }
