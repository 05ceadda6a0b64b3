"""What this machine allows: how long waking an idle process takes, measured in the same run.

An append reaches a client through two process wake-ups (writer → server through inotify,
server → client through a socket), each after the reader sat idle. On a shared VM an idle
process can take milliseconds to run again, and that varies with the host's load; so the bench
measures the floor it is working against, with the same idle gap as the steady-rate appends:
a child blocked on a pipe, written to after `idle_s`, stamps when it woke (one monotonic clock).
"""

from __future__ import annotations

import os
import time
from typing import Any

from client import summary_ms


def idle_wake(samples: int = 50, idle_s: float = 0.2) -> dict[str, Any]:
    """One-way latency of waking an idle process through a pipe, after `idle_s` of idle."""
    down_r, down_w = os.pipe()  # parent -> child
    up_r, up_w = os.pipe()  # child -> parent: when it woke
    pid = os.fork()
    if pid == 0:  # the child: wake, stamp, report, sleep again
        os.close(down_w)
        os.close(up_r)
        while os.read(down_r, 1):
            os.write(up_w, f"{time.monotonic():.9f}".encode().ljust(32))
        os._exit(0)
    os.close(down_r)
    os.close(up_w)
    waits = []
    try:
        for _ in range(samples):
            time.sleep(idle_s)
            sent = time.monotonic()
            os.write(down_w, b"x")
            waits.append(float(os.read(up_r, 32)) - sent)
    finally:
        os.close(down_w)
        os.waitpid(pid, 0)
        os.close(up_r)
    return summary_ms(waits, samples)
