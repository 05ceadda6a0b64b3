"""Which agent processes (Claude Code, Codex) are alive, by working directory (a workspace is
`active` while one is); proc_watch.py sees them start.

Linux: read `/proc/<pid>/cmdline` and the `/proc/<pid>/cwd` link of the user's own processes (no
extra dependency, a few milliseconds). Elsewhere (macOS, Windows): psutil, a dependency there
only (pyproject.toml); should it be missing, nothing is found and `active` falls back to recent
log growth.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PROC = Path("/proc")


def is_claude_cmdline(argv: list[str]) -> bool:
    """Claude Code runs as a `claude` binary, or as node running the package's cli."""
    if not argv:
        return False
    exe = os.path.basename(argv[0])
    if exe == "claude":
        return True
    if exe.startswith("node") or exe == "bun":
        return any(os.path.basename(a) == "claude" or "claude-code" in a for a in argv[1:3])
    return False


def is_codex_cmdline(argv: list[str]) -> bool:
    """Codex runs as its native `codex` binary, or as node running the npm package's launcher."""
    if not argv:
        return False
    exe = os.path.basename(argv[0])
    if exe == "codex":
        return True
    if exe.startswith("node"):
        return any(os.path.basename(a) in ("codex", "codex.js") for a in argv[1:3])
    return False


def is_agent_cmdline(argv: list[str]) -> bool:
    return is_claude_cmdline(argv) or is_codex_cmdline(argv)


def _linux_procs() -> Iterable[tuple[int, list[str], str]]:
    uid = os.getuid()
    for entry in os.scandir(PROC):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue  # another user's agent is not this user's session
            raw = (PROC / entry.name / "cmdline").read_bytes()
            argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
            if not is_agent_cmdline(argv):
                continue
            cwd = os.readlink(PROC / entry.name / "cwd")
        except OSError:
            continue  # exited meanwhile, or not ours to read
        yield int(entry.name), argv, cwd


def _psutil_procs() -> Iterable[tuple[int, list[str], str]]:
    try:
        psutil: Any = importlib.import_module("psutil")  # untyped; declared off Linux only
    except ImportError:
        return
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            argv = proc.info.get("cmdline") or []
            if is_agent_cmdline(list(argv)):
                yield int(proc.info["pid"]), list(argv), str(proc.cwd())
        except (psutil.Error, OSError):
            continue


def agent_pids() -> dict[str, int]:
    """cwd (as the agent reports it, no trailing slash) → pid of a live agent process."""
    procs = _linux_procs() if PROC.is_dir() else _psutil_procs()
    found: dict[str, int] = {}
    for pid, _argv, cwd in procs:
        key = cwd.rstrip("/") or "/"
        found[key] = min(pid, found.get(key, pid))  # the oldest: the session's own process
    return found


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
