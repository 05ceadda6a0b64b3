"""`serve --demo`: a clearly labelled workspace replaying a bundled real transcript, live.

The replay writes the sample line by line into a transcript under the data dir, and an ordinary
`ClaudeSource` tails it: what a newcomer sees is the real pipeline (tailing, parsing, turns,
sub-agents), not a canned feed. It is one session, replayed forever: each pass empties the same
file and writes it again (the tailer sees it shrink and rebuilds the session under a new epoch,
so clients start over), rather than a new session per pass, which piled up one "Demo" session a
minute. The demo's files are wiped at start and stop.

`scripts/serve` adds `--demo` only on a machine with no agent sessions, so the next start after a
real session appeared has no demo; while it runs, the panel's "Auto" never picks it over a real
workspace (extension/sidepanel/session-pickers.js).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import uuid
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from sidemirror.core.private import open_private, private_dir
from sidemirror.core.store import Store
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.files.indexing import IndexProgress

logger = logging.getLogger(__name__)
DEMO_DIRECTORY = "/demo/sidemirror-demo"
DEMO_NAME = "Demo"  # short: pickers show it whole (the panel says it is a replay)
SAMPLE = "sample-session.jsonl"
# The one demo session: its id is the same every pass and every start.
DEMO_SESSION_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "sidemirror-demo"))


def sample_lines() -> list[str]:
    text = resources.files("sidemirror").joinpath("data", "demo", SAMPLE).read_text("utf-8")
    return [line for line in text.splitlines() if line.strip()]


def demo_line(line: str, session_id: str) -> str:
    """A sample line as the demo session's: its cwd, its id, the replay's clock."""
    record: Any = json.loads(line)
    if isinstance(record, dict):
        if "cwd" in record:
            record["cwd"] = DEMO_DIRECTORY
        if "sessionId" in record:
            record["sessionId"] = session_id
        if "timestamp" in record:
            now = datetime.now(UTC)
            record["timestamp"] = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return json.dumps(record, ensure_ascii=False) + "\n"


class DemoSource:
    def __init__(
        self, store: Store, data_dir: Path, pace_s: float = 1.0, *, loops: int | None = None
    ) -> None:
        self.store = store
        self.root = data_dir / "demo"
        self.projects = self.root / "projects"
        self.pace_s = pace_s
        self.loops = loops  # None: replay forever
        self.source = ClaudeSource(
            store, [self.projects], self.root / "state", workspace_name=DEMO_NAME
        )
        self.done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def progress(self) -> IndexProgress:
        return self.source.progress

    @property
    def ready(self) -> asyncio.Event:
        return self.source.ready

    async def start(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        private_dir(self.projects / "-demo-sidemirror-demo")  # 0700 whatever the umask
        await self.source.start()
        self._task = asyncio.create_task(self._replay(), name="demo-replay")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.source.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    async def _replay(self) -> None:
        lines = sample_lines()
        await self.source.ready.wait()
        session_id = DEMO_SESSION_ID
        path = self.projects / "-demo-sidemirror-demo" / f"{session_id}.jsonl"
        n = 0
        while self.loops is None or n < self.loops:
            n += 1
            logger.info("demo: replaying the sample session (pass %d)", n)
            started = asyncio.get_running_loop().time()
            # Emptied, then written again: the same session starts over (see the docstring).
            flags = os.O_WRONLY | os.O_APPEND | os.O_TRUNC
            with os.fdopen(open_private(path, flags), "a", encoding="utf-8") as fh:
                # Titled the way Claude Code records a renamed session, so every list calls it
                # "Demo" rather than by its first prompt.
                title = {"type": "custom-title", "customTitle": DEMO_NAME, "sessionId": ""}
                fh.write(demo_line(json.dumps(title), session_id))
                for line in lines:
                    fh.write(demo_line(line, session_id))
                    fh.flush()
                    await asyncio.sleep(self.pace_s)
                # The sample was recorded before its turn ended; close it the way Claude Code
                # 2.x does, so the demo also shows a turn_complete with its cost.
                elapsed_ms = round((asyncio.get_running_loop().time() - started) * 1000)
                closing = {
                    "type": "system",
                    "subtype": "turn_duration",
                    "durationMs": elapsed_ms,
                    "timestamp": "",
                }
                fh.write(demo_line(json.dumps(closing), session_id))
                fh.flush()
            await asyncio.sleep(self.pace_s * 5)  # let the last turn sit before the next pass
        self.done.set()
