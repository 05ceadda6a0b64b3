"""Server settings: one frozen object built by the CLI (or tests) and read everywhere."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sidemirror.core.projection import DEFAULT_MAX_CHARS
from sidemirror.runtime_file import default_data_dir, default_runtime_dir


def default_claude_dirs() -> list[Path]:
    """Where Claude Code keeps transcripts: $CLAUDE_CONFIG_DIR/projects, ~/.claude/projects,
    ~/.config/claude/projects."""
    dirs: list[Path] = []
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    if config:
        dirs.append(Path(config) / "projects")
    home = Path.home()
    dirs += [home / ".claude" / "projects", home / ".config" / "claude" / "projects"]
    return dirs


def default_codex_dir() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def unique_dirs(dirs: list[Path]) -> list[Path]:
    """The same directory reached twice (symlink, relative path) is read once."""
    seen: set[Path] = set()
    out: list[Path] = []
    for d in dirs:
        key = d.resolve() if d.exists() else d.absolute()
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int | None = None  # None: first free port in PORT_RANGE
    allow_remote: bool = False
    claude_dirs: list[Path] = field(default_factory=list)
    codex_dir: Path | None = None
    max_chars: int = DEFAULT_MAX_CHARS
    data_dir: Path = field(default_factory=default_data_dir)
    runtime_dir: Path = field(default_factory=default_runtime_dir)
    demo: bool = False
    debug_events_jsonl: Path | None = None
    debug_replay: bool = False  # also trace the sessions restored at start
    extension_ids: tuple[str, ...] = ()
    log_level: str = "info"
    # One line per request: off by default, as an open panel alone makes several a second.
    access_log: bool = False
    token: str | None = None  # None: SIDEMIRROR_TOKEN or a fresh random one
    # No lookup of a connection's OS user, as where the OS cannot say (how tests run that mode
    # on Linux). Pairing needs the native messaging host or a code either way (web/pair.py).
    pairing_code: bool = False
    # How long a Claude Code PermissionRequest waits for a decision from the panel (attention/).
    decision_timeout_s: float = 120.0
    # A busy session with no agent process and no write for this long is idle (core/states.py).
    idle_time_s: float = 120.0
    snapshot_limit: int = 200
    queue_size: int = 2048
    # Hosts `sidemirror forward` may mirror here; the next new label is refused (sources/remote/).
    max_hosts: int = 32
