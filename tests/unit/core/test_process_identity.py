"""A runtime file names its server by pid, start time and boot id: the same pid in another
process, after a reboot, or no longer running is not that server (core/process_identity.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from sidemirror.core.process_identity import boot_id, gone_reason, start_ticks, this_process

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_this_process_is_not_gone() -> None:
    assert gone_reason(this_process()) is None


@linux_only
def test_this_process_records_its_start_time_and_boot_id() -> None:
    me = this_process()
    assert me["pid"] == os.getpid()
    assert me["started"] == start_ticks(os.getpid()) and me["started"] > 0
    assert me["boot_id"] == boot_id() and len(me["boot_id"]) == 36


def test_a_pid_that_no_longer_runs() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid names nothing (until the kernel reuses it)
    reason = gone_reason({"pid": proc.pid})
    assert reason == f"its server (pid {proc.pid}) is no longer running"


@linux_only
def test_the_same_pid_with_another_start_time_is_another_process() -> None:
    me = this_process()
    reason = gone_reason({**me, "started": me["started"] + 1})
    assert reason is not None and f"pid {me['pid']} now belongs to another process" in reason


@linux_only
def test_a_file_from_before_a_reboot_is_stale_whatever_its_pid() -> None:
    reason = gone_reason({**this_process(), "boot_id": "00000000-0000-0000-0000-000000000000"})
    assert reason is not None and "before the machine restarted" in reason


@linux_only
def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields() -> None:
    # Field 2 of /proc/PID/stat is the command name in parentheses, which the process sets.
    code = "import ctypes, sys; ctypes.CDLL(None).prctl(15, b'x) 1 (2', 0, 0, 0); sys.stdin.read()"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    try:
        with open(f"/proc/{proc.pid}/comm", "rb") as fh:
            while fh.read() != b"x) 1 (2\n":  # wait for the rename, not for a time
                fh.seek(0)
        started = start_ticks(proc.pid)
        mine = start_ticks(os.getpid())
        assert started is not None and mine is not None and started >= mine  # started after us
        assert gone_reason({"pid": proc.pid, "started": started}) is None
        assert gone_reason({"pid": proc.pid, "started": started - 1}) is not None
    finally:
        proc.communicate(b"")


def test_a_file_without_a_pid_cannot_be_told() -> None:
    assert gone_reason({"port": 1}) is None
    assert gone_reason({"pid": 0}) is None
