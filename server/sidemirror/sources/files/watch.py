"""File changes under a few roots, as batches of (change, path), for the sources that tail files.

On Linux the changes come from an inotify fd read by the event loop itself (`inotify_simple`,
`loop.add_reader`): nothing wakes while nothing changes, and a write reaches the consumer in well
under a millisecond. Everything already queued when the fd turns readable is read in one go and
coalesced per path, so a burst costs one batch, without a timer adding latency.

inotify is not recursive, so this keeps the watch set in step with the tree: every directory down
to `max_depth`, directories created or moved in later (their existing files reported as added),
removed directories dropped. A root that does not exist yet is waited for from its nearest
existing ancestor and watched once it appears; a root removed later is waited for again. When the
kernel queue overflows, the tree is walked again and every file modified since the last moment
the queue was known empty is reported as modified.

Elsewhere (or when `inotify_simple` cannot load, or `SIDEMIRROR_WATCH=watchfiles`), watchfiles does
the watching with the settings the sources used before (it polls its Rust notifier every `step`
ms and holds a burst up to `debounce` ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import errno
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from inotify_simple import INotify

logger = logging.getLogger(__name__)

Backend = Literal["inotify", "watchfiles"]
BACKEND_ENV = "SIDEMIRROR_WATCH"  # force a backend, e.g. to exercise the fallback on Linux
OVERFLOW_MARGIN_S = 1.0  # mtimes are coarse (a jiffy or so): rescan a little further back

# inotify's bits (inotify(7)): the watches' masks, and each event's tests (close_watch.py's too).
IN_MODIFY, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x2, 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_ISDIR = 0x1000000, 0x40000000


class Change(enum.IntEnum):
    """What happened to a file; the values are watchfiles' own, so the fallback maps 1:1."""

    added = 1
    modified = 2
    deleted = 3


Batch = list[tuple[Change, Path]]
Accept = Callable[[Path], bool]


def _merge(old: Change | None, new: Change) -> Change:
    """One change per path per batch: where the file ended up, and whether it is new."""
    if new is Change.deleted:
        return new
    if old in (Change.added, Change.deleted):
        return Change.added  # created (or replaced) and then written: still new to the consumer
    return new


class _Coalescer:
    def __init__(self) -> None:
        self.changes: dict[Path, Change] = {}

    def add(self, change: Change, path: Path) -> None:
        self.changes[path] = _merge(self.changes.get(path), change)

    def take(self) -> Batch:
        batch = [(change, path) for path, change in self.changes.items()]
        self.changes.clear()
        return batch


def pick_backend(backend: Backend | None = None) -> Backend:
    """The requested backend, else `$SIDEMIRROR_WATCH`, else inotify when Linux can load it."""
    wanted = backend or os.environ.get(BACKEND_ENV) or None
    if wanted not in (None, "inotify", "watchfiles"):
        logger.warning("%s=%s is not a watch backend; choosing one", BACKEND_ENV, wanted)
        wanted = None
    if wanted == "watchfiles":
        return "watchfiles"
    if sys.platform.startswith("linux"):
        try:
            import inotify_simple  # noqa: F401
        except (ImportError, OSError, AttributeError) as exc:  # not installed, or no inotify
            logger.info("inotify_simple unavailable (%s); watching with watchfiles", exc)
        else:
            return "inotify"
    if wanted == "inotify":
        logger.warning("inotify watching is not available here; using watchfiles")
    return "watchfiles"


@contextlib.asynccontextmanager
async def watch_paths(
    roots: Sequence[Path],
    *,
    accept: Accept,
    max_depth: int | None = None,
    stop_event: asyncio.Event | None = None,
    backend: Backend | None = None,
    step_ms: int = 10,
    rest_s: float = 0.0,
) -> AsyncIterator[AsyncIterator[Batch]]:
    """Watch files under `roots`; once entered, every later change is in some batch.

    `accept` picks the paths worth reporting (a directory only when it appears: one named like a
    file is reported so its owner can say why it is not read, as watchfiles does); `max_depth`
    limits how deep directories are watched (a root is depth 0). Iteration ends when
    `stop_event` is set. `step_ms` only tunes the watchfiles fallback. `rest_s`: with inotify,
    how long to leave changes gathering after each batch (close_watch.py says why).
    """
    roots = [Path(os.path.abspath(r)) for r in roots]
    watcher = None
    if pick_backend(backend) == "inotify":
        try:
            watcher = _InotifyWatcher(roots, accept, max_depth, stop_event, rest_s)
        except OSError as exc:  # fs.inotify.max_user_instances reached
            logger.warning("cannot open an inotify instance (%s); watching with watchfiles", exc)
    if watcher is not None:
        try:
            await watcher.start()
            yield watcher.batches()
        finally:
            watcher.close()
    else:
        async with _watchfiles(roots, accept, stop_event, step_ms) as batches:
            yield batches


class WatchPaths(Protocol):
    """`watch_paths`, or a stand-in with its shape (sources/remote/watcher.py shares one watch
    among many sources)."""

    def __call__(
        self,
        roots: Sequence[Path],
        *,
        accept: Accept,
        max_depth: int | None = None,
        stop_event: asyncio.Event | None = None,
        step_ms: int = 10,
        rest_s: float = 0.0,
    ) -> contextlib.AbstractAsyncContextManager[AsyncIterator[Batch]]: ...


# --- inotify ----------------------------------------------------------------------------------


@dataclass
class _Dir:
    path: Path
    wd: int  # its watch descriptor
    depth: int | None = None  # in a root's tree (its changes are reported), or only a waypoint
    waiting: set[Path] = field(default_factory=set)  # missing roots this dir leads towards


class _InotifyWatcher:
    def __init__(
        self,
        roots: list[Path],
        accept: Accept,
        max_depth: int | None,
        stop_event: asyncio.Event | None,
        rest_s: float = 0.0,
    ) -> None:
        from inotify_simple import INotify

        self.rest_s = rest_s
        self.roots = roots
        self.accept = accept
        self.max_depth = max_depth
        self.stop_event = stop_event
        # Non-blocking: a drain reads what is queued (the size the kernel says) and never waits.
        self.inotify: INotify = INotify(nonblocking=True)
        self.fd = self.inotify.fileno()
        self.closed = False
        self.dirs: dict[int, _Dir] = {}
        self.wd_of: dict[Path, int] = {}
        self.pending = _Coalescer()
        self.empty_at = time.time()  # the last moment the kernel queue was known drained
        self._waiter: asyncio.Future[None] | None = None
        self._stopper: asyncio.Task[None] | None = None
        moves = IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
        self.tree_mask = moves | IN_MODIFY | IN_CREATE | IN_DELETE
        self.waypoint_mask = moves | IN_CREATE  # only dirs appearing matter there

    # --- lifecycle ---

    async def start(self) -> None:
        # Thousands of dirs take tens of ms to watch and list: not on the loop. Nothing else
        # touches this watcher until it returns.
        await asyncio.to_thread(self._attach_all)
        if self.stop_event is not None:
            self._stopper = asyncio.create_task(self._stop_on(self.stop_event))

    def _attach_all(self) -> None:
        for root in self.roots:
            self._attach(root, None)  # files already there are the sources' startup scan's job

    async def _stop_on(self, event: asyncio.Event) -> None:
        await event.wait()
        self._wake()

    def close(self) -> None:
        if self._stopper is not None:
            self._stopper.cancel()
        self.closed = True
        self._wake()
        self.inotify.close()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _stopped(self) -> bool:
        return self.closed or (self.stop_event is not None and self.stop_event.is_set())

    async def batches(self) -> AsyncIterator[Batch]:
        while not self._stopped():
            await self._readable()
            if self._stopped():
                return
            self._drain()
            batch = self.pending.take()
            if batch:
                yield batch
                if self.rest_s > 0:
                    await self._rest()

    async def _rest(self) -> None:
        """Changes gather in the kernel's queue for `rest_s` (cut short when stopping)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        timer = loop.call_later(self.rest_s, _resolve, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        loop.add_reader(self.fd, _resolve, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            loop.remove_reader(self.fd)

    def _drain(self) -> None:
        overflowed = False
        for wd, mask, _cookie, name in self.inotify.read(timeout=0):
            if mask & IN_Q_OVERFLOW:
                overflowed = True
            else:
                self._handle(wd, mask, name)
        if overflowed:
            self._rescan()
        self.empty_at = time.time()

    # --- the watch set ---

    def _add(self, path: Path, depth: int | None, waiting_for: Path | None) -> _Dir | None:
        """Watch `path` in a tree (depth) and/or as a waypoint; None if it is not a dir (now)."""
        old_wd = self.wd_of.get(path)
        entry = self.dirs.get(old_wd) if old_wd is not None else None
        if entry is not None and entry.depth is not None:
            depth = entry.depth if depth is None else min(depth, entry.depth)
        try:
            wd = self.inotify.add_watch(
                path, self.tree_mask if depth is not None else self.waypoint_mask
            )
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                logger.warning("out of inotify watches (fs.inotify.max_user_watches): %s", path)
            return None  # gone meanwhile or not a dir: its parent's events tell the rest
        if entry is None or wd != old_wd:
            self._forget(old_wd)  # the path now leads to another dir (deleted and recreated)
            entry = self.dirs.get(wd)  # the same dir by another path (moved, linked)
            if entry is None:
                entry = _Dir(path, wd)
                self.dirs[wd] = entry
            entry.path = path
            self.wd_of[path] = wd
        entry.depth = depth
        if waiting_for is not None:
            entry.waiting.add(waiting_for)
        return entry

    def _forget(self, wd: int | None) -> _Dir | None:
        entry = self.dirs.pop(wd, None) if wd is not None else None
        if entry is not None and self.wd_of.get(entry.path) == wd:
            del self.wd_of[entry.path]
        return entry

    def _drop(self, wd: int) -> None:
        """Forget a watch and remove it from the kernel (its IN_IGNORED then finds nothing)."""
        entry = self._forget(wd)
        if entry is not None:
            with contextlib.suppress(OSError):  # the kernel dropped it already
                self.inotify.rm_watch(entry.wd)

    def _drop_tree(self, top: Path) -> None:
        """A dir moved away: the watches under it follow it and would report stale paths."""
        for path, wd in list(self.wd_of.items()):
            if path == top or top in path.parents:
                self._drop(wd)

    def _attach(self, root: Path, out: _Coalescer | None, since: float | None = None) -> None:
        """Watch `root`'s tree if it exists, else wait for it from its nearest existing ancestor."""
        while True:
            if root.is_dir():
                self._add_tree(root, 0, out, since)
                self._done_waiting(root)
                return
            ancestor = root.parent
            while not ancestor.is_dir() and ancestor != ancestor.parent:
                ancestor = ancestor.parent
            if self._add(ancestor, None, root) is None:
                logger.warning("cannot watch %s for %s to appear", ancestor, root)
                return
            if not (ancestor / root.relative_to(ancestor).parts[0]).is_dir():
                return  # its IN_CREATE brings us back here
            # The next step appeared between the check and the watch: go on down.

    def _done_waiting(self, root: Path) -> None:
        for wd, entry in list(self.dirs.items()):
            if root in entry.waiting:
                entry.waiting.discard(root)
                if entry.depth is None and not entry.waiting:
                    self._drop(wd)

    def _add_tree(
        self, top: Path, depth: int, out: _Coalescer | None, since: float | None = None
    ) -> None:
        """Watch `top` and its subdirectories; report their accepted files into `out`.

        Each directory is watched before it is listed, so a file is either listed or evented.
        Without `since` every file counts as added (a new directory); with it, files modified
        since then count as modified (a rescan after overflow).
        """
        stack = [(top, depth)]
        while stack:
            path, level = stack.pop()
            if self._add(path, level, None) is None:
                continue
            try:
                with os.scandir(path) as it:
                    entries = list(it)
            except OSError:
                continue
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if not is_dir and out is None:
                    continue  # the startup watch: ten thousand files, none reported
                child = Path(entry.path)
                if is_dir:
                    if self.max_depth is None or level < self.max_depth:
                        stack.append((child, level + 1))
                    if out is not None and since is None and self.accept(child):
                        out.add(Change.added, child)
                elif out is not None and self.accept(child):
                    if since is None:
                        out.add(Change.added, child)
                    elif _mtime(entry) >= since:
                        out.add(Change.modified, child)

    # --- events ---

    def _handle(self, wd: int, mask: int, name: str) -> None:
        """One event of the watch `wd`; `name` is the file's in that dir ("" for the dir's own)."""
        entry = self.dirs.get(wd)
        if entry is None:
            return  # a watch already dropped (its last events, or the IN_IGNORED itself)
        if mask & IN_IGNORED:
            self._forget(wd)
            self._lost(entry)
        elif mask & IN_MOVE_SELF:
            self._drop_tree(entry.path)  # a root (other dirs were dropped at IN_MOVED_FROM)
            self._lost(entry)
        elif mask & IN_DELETE_SELF or not name:
            pass  # IN_IGNORED follows
        elif mask & IN_ISDIR:
            self._dir_event(entry, entry.path / name, mask)
        elif entry.depth is not None:
            path = entry.path / name
            if not self.accept(path):
                return
            if mask & (IN_CREATE | IN_MOVED_TO):
                self.pending.add(Change.added, path)
            elif mask & IN_MODIFY:
                self.pending.add(Change.modified, path)
            elif mask & (IN_DELETE | IN_MOVED_FROM):
                self.pending.add(Change.deleted, path)

    def _dir_event(self, entry: _Dir, path: Path, mask: int) -> None:
        if mask & (IN_CREATE | IN_MOVED_TO):
            if entry.depth is not None and self.accept(path):
                self.pending.add(Change.added, path)
            for root in sorted(entry.waiting):
                if path == root or path in root.parents:
                    self._attach(root, self.pending)
            depth = entry.depth
            if depth is not None and (self.max_depth is None or depth < self.max_depth):
                self._add_tree(path, depth + 1, self.pending)
        elif mask & IN_MOVED_FROM:
            self._drop_tree(path)
        # IN_DELETE of a dir needs nothing: each removed dir gets its own IN_IGNORED.

    def _lost(self, entry: _Dir) -> None:
        """A watched dir is gone: wait again for the roots it was, or led to."""
        for root in self.roots:
            if root == entry.path or root in entry.waiting:
                self._attach(root, self.pending)

    def _rescan(self) -> None:
        logger.warning("inotify queue overflowed; rescanning %s", ", ".join(map(str, self.roots)))
        for wd, entry in list(self.dirs.items()):
            if not entry.path.is_dir():
                self._drop(wd)  # its IN_IGNORED may have been among the lost events
        since = self.empty_at - OVERFLOW_MARGIN_S
        for root in self.roots:
            self._attach(root, self.pending, since)


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0


# --- watchfiles fallback ------------------------------------------------------------------------


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


@contextlib.asynccontextmanager
async def _watchfiles(
    roots: list[Path], accept: Accept, stop_event: asyncio.Event | None, step_ms: int
) -> AsyncIterator[AsyncIterator[Batch]]:
    from watchfiles import awatch

    # A missing root is watched through its parent, as far as that exists (no deeper waiting).
    targets = sorted({r if r.is_dir() else r.parent for r in roots if r.parent.is_dir()})
    if not targets:
        yield _until(stop_event)
        return
    stop = stop_event or asyncio.Event()
    changes = awatch(
        *targets,
        stop_event=stop,
        debounce=400,
        step=step_ms,
        recursive=True,
        watch_filter=lambda _change, p: _under(Path(p), roots) and accept(Path(p)),
    )
    # awatch sets up its notifier synchronously in its first step, before its first await: take
    # that step now, so that once entered every later change is seen.
    first = asyncio.ensure_future(anext(changes))
    await asyncio.sleep(0)

    async def batches() -> AsyncIterator[Batch]:
        step = first
        while True:
            try:
                raw = await step
            except StopAsyncIteration:
                return
            merged = _Coalescer()
            for change, p in sorted(raw, key=lambda c: c[1]):
                merged.add(Change(change.value), Path(p))
            yield merged.take()
            step = asyncio.ensure_future(anext(changes))

    try:
        yield batches()
    finally:
        stop.set()
        first.cancel()
        with contextlib.suppress(BaseException):
            await first
        with contextlib.suppress(RuntimeError):  # still running in a cancelled consumer
            await changes.aclose()


async def _until(stop_event: asyncio.Event | None) -> AsyncIterator[Batch]:
    """Nothing to watch: no batches, ever, until stopped."""
    await (stop_event.wait() if stop_event is not None else asyncio.Event().wait())
    return
    yield  # an async generator
