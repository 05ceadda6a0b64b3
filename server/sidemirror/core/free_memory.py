"""Handing freed heap memory back to the OS after a burst of work (a cold listing, a search
backfill). glibc keeps what Python frees in its heaps, and each thread that allocated gets an
arena of its own: after reading a 1.3 GB archive the server held ~25 MB it no longer used.
`malloc_trim(0)` returns the free pages of every arena; elsewhere (musl, macOS) this does
nothing.

The server also keeps its heaps from growing in the first place (`limit_heap_growth`, at the
start of `serve`). Measured in issue 34's fleet (20 sessions loaded at once, then 400 lines/s),
glibc's defaults left ~22 MB free but held in the heaps within seconds, of 44 MB: every worker
thread that reads a file gets an arena of its own (up to 8 per core), and after the first large
buffer (a file chunk, a load's items) is freed, glibc raises its mmap threshold, so later large
buffers are carved from the heaps and fragment them instead of being mapped and unmapped. Two
arenas and a fixed 128 KiB threshold (glibc's starting value) left ~4 MB free of 26 MB, the
RSS 12 MB lower, at the same CPU. A user's own MALLOC_* settings or GLIBC_TUNABLES win.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
from collections.abc import Callable

logger = logging.getLogger(__name__)
# mallopt parameters (glibc's malloc.h)
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
ARENA_MAX = 2  # the event loop's main arena, and one shared by the worker threads
MMAP_THRESHOLD = 128 * 1024  # buffers this big or bigger: mapped, and unmapped when freed
_USER_SETTINGS = ("GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_")


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    glibc = hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt")
    return libc if glibc else None


def _malloc_trim() -> Callable[[int], int] | None:
    libc = _libc()
    return None if libc is None else libc.malloc_trim


def release_free_memory() -> bool:
    """Return freed heap pages to the OS; whether this platform could (a few ms: call it after
    a burst, not on a hot path)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def limit_heap_growth() -> bool:
    """Few arenas and a fixed mmap threshold (see above); whether they were set. Call it before
    the server starts its threads."""
    libc = _libc()
    if libc is None or any(name in os.environ for name in _USER_SETTINGS):
        return False
    return bool(libc.mallopt(M_ARENA_MAX, ARENA_MAX)) and bool(
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    )
