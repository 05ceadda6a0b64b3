"""Freed heap memory goes back to the OS (core/free_memory.py): what a worker thread read and
let go stays in its glibc arena until trimmed, the way a search backfill's reads did."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from sidemirror.core.free_memory import release_free_memory

from tests.harness.paths import ROOT

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


# A fleet's first loads (issue 34), in small: worker threads each read a transcript in one chunk,
# decode its lines and keep a few items, several times. Then the process's anonymous RSS.
FIRST_LOADS = """
import json, sys, threading
sys.path.insert(0, sys.argv[2])
from sidemirror.core.free_memory import limit_heap_growth
if sys.argv[1] == "limited":
    assert limit_heap_growth()
line = json.dumps({"type": "assistant", "message": {"content": [{"text": "x" * 700}]}})
kept = []
start = threading.Barrier(8)  # all at once, as a fleet's first loads run
def load(n):
    start.wait()
    for _ in range(6):
        chunk = ((line + "\\n") * (1500 + 37 * n)).encode()
        records = [json.loads(raw) for raw in chunk.split(b"\\n") if raw]
        kept.append([r["message"]["content"][0]["text"][:600] + str(n) for r in records[::40]])
        del chunk, records
threads = [threading.Thread(target=load, args=(n,)) for n in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print([int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon")][0])
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_the_heaps_hold_less_of_what_loads_freed() -> None:
    def anon_kib(mode: str) -> int:
        argv = [sys.executable, "-c", FIRST_LOADS, mode, str(ROOT / "server")]
        return int(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)

    glibc_defaults, limited = anon_kib("defaults"), anon_kib("limited")
    # Measured: ~59 MB with glibc's defaults, ~31 MB limited (the freed chunks are unmapped).
    assert glibc_defaults - limited > 12 << 10, (glibc_defaults, limited)
