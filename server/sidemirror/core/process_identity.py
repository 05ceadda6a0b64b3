"""Telling the process that wrote a runtime file from a later one that got its pid.

A pid alone names a process only while it runs: after a kill -9, an OOM kill or a reboot the
kernel hands the same number to the next process, possibly another user's. So a runtime file
records, with the pid, the process's start time (field 22 of `/proc/<pid>/stat`, in clock ticks
since boot) and the boot id (`/proc/sys/kernel/random/boot_id`): the same pid with another start
time or boot id is another process. Where there is no `/proc` (macOS, Windows) only the pid is
recorded and checked.

Standard library only: the hook reads this on every tool call.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` is a module import of its own: the hook runs on every tool call
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (None: no such process, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces or ')': the
    # fields after the last ')' are plain numbers, field 3 first.
    fields = stat[stat.rfind(b")") + 2 :].split()
    try:
        return int(fields[22 - 3])
    except (IndexError, ValueError):
        return None


def boot_id() -> str | None:
    try:
        with open(BOOT_ID_PATH, encoding="ascii") as fh:
            return fh.read().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def this_process() -> dict[str, Any]:
    """The fields a runtime file records about the server that writes it."""
    pid = os.getpid()
    found: dict[str, Any] = {"pid": pid, "started": start_ticks(pid), "boot_id": boot_id()}
    return {key: value for key, value in found.items() if value is not None}


def gone_reason(record: Mapping[str, Any]) -> str | None:
    """Why the process a runtime file names is not the one that wrote it (None: it is, or a
    file without a pid, which cannot be told). A process that exists but is not ours to
    signal (EPERM) is another user's, so never our server."""
    pid = record.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    recorded_boot, current_boot = record.get("boot_id"), boot_id()
    if isinstance(recorded_boot, str) and current_boot and recorded_boot != current_boot:
        return f"it was written before the machine restarted (its server, pid {pid}, is gone)"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return f"its server (pid {pid}) is no longer running"
    except PermissionError:
        return f"pid {pid} now belongs to another user's process (its server is gone)"
    except OSError:
        return f"pid {pid} cannot be checked"
    recorded_start, current_start = record.get("started"), start_ticks(pid)
    if isinstance(recorded_start, int) and current_start not in (None, recorded_start):
        return (
            f"pid {pid} now belongs to another process (started at tick {current_start}, "
            f"the server at tick {recorded_start}; its server is gone)"
        )
    return None
