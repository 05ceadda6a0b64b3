"""Every folder the server makes under its data dir is 0700, and every file 0600, whatever the
umask: a real server started under umask 0 (new files 0666, new folders 0777 unless the code
says otherwise), with a data dir whose parents do not exist yet, then made to write everything
it writes: an ingest journal, browser activity, a Claude transcript's merge state, spilled
items, the search index, the demo session. (Forward mirror folders are tested with forwarding.)
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import urllib.request
from pathlib import Path

from tests.harness.auth import AUTH
from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.harness import MID_SESSION, claude_project

from .report import record


def modes(root: Path) -> dict[str, str]:
    """Each path under `root` (and `root`) with its mode, for the ones that are too open."""
    loose = {}
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        if mode & ~want:
            loose[str(path.relative_to(root.parent))] = f"{mode:04o}"
    return loose


def test_every_folder_under_the_data_dir_is_private_under_umask_0(tmp_path: Path) -> None:
    server = Server(tmp_path, "--demo")
    server.data = tmp_path / "not-yet" / "data"  # its parents are made by the server too
    project = claude_project(server)
    shutil.copy(MID_SESSION, project / MID_SESSION.name)
    old = os.umask(0)
    try:
        server.start()
    finally:
        os.umask(old)
    try:
        server.wait_settled()
        # More items than a session keeps in memory (core/item_log.py): the rest are spilled.
        many = [{"type": "user", "content": f"line {n}"} for n in range(2100)]
        server.ingest("/home/dev/modes", "s1", many)
        req = urllib.request.Request(server.url("/api/activity"), method="POST",
                                     data=json.dumps({"command": "goto", "args": ["https://a.test"]}).encode(),
                                     headers={**AUTH, "Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200
        expected = ("ingest", "activity", "claude-merge", "demo", "spill", "index.sqlite3")
        wait_until(lambda: all((server.data / name).exists() for name in expected), 30,
                 f"the server wrote {expected}")  # fmt: skip
        loose = modes(tmp_path / "not-yet")
    finally:
        server.stop()
    assert not loose, sorted(loose.items())
    record("umask 0: modes under the data dir",
           {"paths": sum(1 for _ in (tmp_path / "not-yet").rglob("*")), "loose": 0}, trials=1)  # fmt: skip
