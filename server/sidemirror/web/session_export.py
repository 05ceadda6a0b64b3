"""`GET /workspace/{id}/session/export?session=ID&format=html|md|jsonl`: a session as the file
`sidemirror export` writes, downloaded (the panel's Export button).

The same walk and writers as the CLI (export/), reading the store instead of HTTP
(export/store_pages.py): redacted as every output is, oldest item first. It streams in bounded
memory: the walk runs in a worker thread and hands the response a few 64 KiB chunks at a time
through a small queue, so a slow reader holds the walk back and a 1 GB session is never held.
A failure before the first byte is an error answer; after it, the connection is cut (the
download is seen to fail, never a file silently short).
"""

from __future__ import annotations

import asyncio
import io
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from aiohttp import web

from sidemirror.core.numbers import parse_count
from sidemirror.core.views import session_summary, workspace_summary
from sidemirror.export.api import ExportError, Located
from sidemirror.export.html_page import HtmlWriter
from sidemirror.export.jsonl import JsonlWriter
from sidemirror.export.markdown import MarkdownWriter
from sidemirror.export.store_pages import StorePages
from sidemirror.export.walker import SessionWalk, Writer, export
from sidemirror.web.bodies import error_response
from sidemirror.web.rules import cors_headers
from sidemirror.web.sessions import session_of, workspace_of
from sidemirror.web.state import APP_STATE

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

CHUNK = 64 * 1024
QUEUED_CHUNKS = 4  # what waits for a slow reader: a quarter MiB
FORMATS: dict[str, tuple[Callable[[TextIO, int | None], Writer], str]] = {
    "html": (HtmlWriter, "text/html"),
    "md": (MarkdownWriter, "text/markdown"),
    "jsonl": (JsonlWriter, "application/x-ndjson"),
}
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class ChunkQueue(io.RawIOBase):
    """The worker thread's bytes, handed to the event loop a chunk at a time; a full queue
    blocks the thread until the response takes one."""

    END = b""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.loop = loop
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(QUEUED_CHUNKS)
        self.stopped = threading.Event()

    def writable(self) -> bool:
        return True

    def write(self, b: ReadableBuffer, /) -> int:
        chunk = bytes(b)
        if chunk:
            self._put(chunk)
        return len(chunk)

    def _put(self, chunk: bytes) -> None:
        # Once the response is gone, output is dropped (a buffer flushed as the walk's writer
        # is collected included); the walk itself stops at its next read (StorePages).
        if not self.stopped.is_set():
            asyncio.run_coroutine_threadsafe(self.queue.put(chunk), self.loop).result()

    def finish(self) -> None:
        """From the thread, last: no more chunks."""
        if not self.stopped.is_set():
            self._put(self.END)

    def stop(self) -> None:
        """From the loop, when the response ends: the walk's next read raises, a put it waits
        on is let through, and what it writes from now on is dropped."""
        self.stopped.set()
        while not self.queue.empty():
            self.queue.get_nowait()


def _walk(walk: SessionWalk, fmt: str, max_chars: int | None, sink: ChunkQueue) -> None:
    out = io.TextIOWrapper(io.BufferedWriter(sink, CHUNK), encoding="utf-8", newline="")
    try:
        export(walk, FORMATS[fmt][0](out, max_chars), max_chars)
        out.flush()
    finally:
        sink.finish()


def _options(request: web.Request) -> tuple[str, int | None]:
    fmt = request.query.get("format", "md")
    if fmt not in FORMATS:
        raise web.HTTPBadRequest(text=f"format must be html, md or jsonl, got {fmt!r}")
    raw = request.query.get("max_chars")
    max_chars = None if raw is None else parse_count(raw)
    if raw is not None and not max_chars:
        why = f"max_chars must be a whole number of at least 1, got {raw!r}"
        raise web.HTTPBadRequest(text=why)
    return fmt, None if fmt == "jsonl" else max_chars


def file_name(session_id: str, fmt: str) -> str:
    """`sidemirror-<id>.<fmt>`: only characters every file system and header takes."""
    return f"sidemirror-{_UNSAFE_NAME.sub('_', session_id)[:80]}.{fmt}"


async def export_session(request: web.Request) -> web.StreamResponse:
    state = request.app[APP_STATE]
    ws = workspace_of(request)
    log = session_of(ws, request.query.get("session"))
    fmt, max_chars = _options(request)
    await state.store.load(log)
    loop = asyncio.get_running_loop()
    sink = ChunkQueue(loop)
    pages = StorePages(state.store, log, loop, sink.stopped)
    walk = SessionWalk(pages, Located(workspace_summary(ws), session_summary(log)))
    job = asyncio.ensure_future(asyncio.to_thread(_walk, walk, fmt, max_chars, sink))
    try:
        chunk = await sink.queue.get()
        if chunk == sink.END:
            try:
                await job
            except ExportError as exc:  # nothing sent yet: say why
                return error_response(500, "export_failed", str(exc))
        resp = web.StreamResponse(
            headers={
                "Content-Type": f"{FORMATS[fmt][1]}; charset=utf-8",
                "Content-Disposition": f'attachment; filename="{file_name(log.session_id, fmt)}"',
                **cors_headers(request.headers.get("Origin")),
            }
        )
        await resp.prepare(request)
        while chunk != sink.END:
            await resp.write(chunk)
            chunk = await sink.queue.get()
        await job  # an error now cuts the connection: the download fails, never short
        await resp.write_eof()
        return resp
    finally:
        sink.stop()
        job.add_done_callback(_retrieve)


def _retrieve(job: asyncio.Future[None]) -> None:
    """A walk stopped because its client left ends with `ExportError`: expected, not logged."""
    if not job.cancelled():
        job.exception()
