"""Freed heap memory goes back to the OS (core/free_memory.py): what a worker thread read and
let go stays in its glibc arena until trimmed, the way a search backfill's reads did."""

from __future__ import annotations

import threading

import psutil
from sidemirror.core.free_memory import release_free_memory

BLOCK = 4096  # over pymalloc's 512 B: from glibc's malloc, in the thread's arena
BLOCKS = 16_384  # 64 MiB in all


def _read_and_let_go(kept: list[bytes]) -> None:
    blocks = [bytes([n % 251]) * BLOCK for n in range(BLOCKS)]
    kept += blocks[::64]  # one block in 64 still in use: no heap can shrink from its top
    del blocks


def test_what_a_thread_freed_is_handed_back() -> None:
    me = psutil.Process()
    kept: list[bytes] = []
    # What earlier tests freed would otherwise be reused without growing the RSS.
    release_free_memory()
    before = me.memory_info().rss
    worker = threading.Thread(target=_read_and_let_go, args=(kept,))
    worker.start()
    worker.join()
    held = me.memory_info().rss
    assert held - before > 32 << 20  # freed, yet still the process's
    assert release_free_memory()
    after = me.memory_info().rss
    assert held - after > 32 << 20
    assert all(block[0] == (n * 64) % 251 for n, block in enumerate(kept))
