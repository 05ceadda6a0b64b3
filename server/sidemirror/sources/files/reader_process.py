"""A second interpreter that reads files for a cold start's indexing.

Reading ten thousand transcripts' heads and tails is CPU-bound Python: threads take turns on one
interpreter lock, so one core does all of it while the other idles. This process reads a share
of each chunk on the other core. It speaks JSON lines on its pipes: the parent sends a batch of
paths (a JSON array of strings, one line) and gets one line back, an array with an answer per
path in order: `[row]`, where row is what `encode(read(path))` gives (the very row the file
index keeps, redacted there); `0` when the read gave nothing; `1` for a value the index does
not keep.

    python -m sidemirror.sources.files.reader_process MODULE:READ MODULE:ENCODE

It exits when its stdin closes. Nothing else is shared: a crash loses only the batch in hand,
which the parent reads itself (indexing.py).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

READY = b"ready\n"
# What a path's line says besides `[row]`: the read gave nothing, or a value the file index
# does not keep (the parent reads that file itself: only a row crosses the pipe).
NOTHING = 0
NOT_KEPT = 1
START_TIMEOUT_S = 30.0
LINE_LIMIT = 64 << 20  # a batch's answers: a few hundred bytes a file


def _function(name: str) -> Callable[..., Any]:
    module, _, attribute = name.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    return function


def _kept(row: Any) -> Any:
    return NOT_KEPT if row is None else [row]


def dotted_name(function: Callable[..., Any]) -> str:
    return f"{function.__module__}:{function.__qualname__}"


def main(argv: Sequence[str]) -> int:
    read, encode = _function(argv[0]), _function(argv[1])
    out = sys.stdout.buffer
    out.write(READY)
    out.flush()
    for line in sys.stdin.buffer:
        answers = []
        for path in json.loads(line):
            value = read(Path(path))
            answers.append(NOTHING if value is None else _kept(encode(value)))
        # ASCII: a lone surrogate a transcript escaped stays an escape, not an encoding error.
        out.write(json.dumps(answers).encode() + b"\n")
        out.flush()
    return 0


class ReaderProcess:
    """The parent's end: `start`, then `read` batches one at a time, then `finish` (or `close`,
    where nothing can wait: it stops at once if it is mid-batch)."""

    def __init__(self, read: Callable[[Path], Any], encode: Callable[[Any], Any]) -> None:
        self._names = (dotted_name(read), dotted_name(encode))
        self._process: asyncio.subprocess.Process | None = None
        self._busy = False
        self._ready = False
        self.failed = False

    async def start(self) -> bool:
        """Start the process and wait until it can read; False (and `failed`) if it cannot."""
        # The same import roots as this interpreter's, whichever way it found `sidemirror`.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                __name__,
                *self._names,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                # A traceback could quote what it read: the parent says why in its own log.
                stderr=asyncio.subprocess.DEVNULL,
                env=env,
                limit=LINE_LIMIT,
            )
            assert self._process.stdout is not None
            ready = await asyncio.wait_for(self._process.stdout.readline(), START_TIMEOUT_S)
            if ready != READY:
                raise OSError("it exited before it could read")
        except (OSError, TimeoutError) as error:
            self._fail(error)
            return False
        self._ready = True
        return True

    async def read(self, paths: Sequence[Path]) -> list[Any] | None:
        """The answers for `paths`, in order (`[row]`, NOTHING or NOT_KEPT); None if the
        process failed (read them elsewhere)."""
        process = self._process
        if process is None or self.failed:
            return None
        assert process.stdin is not None and process.stdout is not None
        self._busy = True
        try:
            process.stdin.write(json.dumps([str(path) for path in paths]).encode() + b"\n")
            await process.stdin.drain()
            line = await process.stdout.readline()
            if not line:
                raise OSError("it exited mid-batch")
            answers = json.loads(line)
            if not isinstance(answers, list) or len(answers) != len(paths):
                raise ValueError("a batch's answers do not match its paths")
            return answers
        except (OSError, ValueError) as error:  # ConnectionError is an OSError
            self._fail(error)
            return None
        finally:
            self._busy = False

    def _fail(self, error: BaseException) -> None:
        logger.warning("reader process unavailable (%s); reading in threads", error)
        self.failed = True
        self.close()

    async def finish(self) -> None:
        """The end of its input: it exits, and is waited for."""
        process = self._process
        self.close()
        if process is not None:
            await process.wait()

    def close(self) -> None:
        """Let it exit at the end of its input; stopped at once if it is mid-batch, not ready
        yet (still importing) or failed."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()
        if self._busy or self.failed or not self._ready:
            process.kill()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
