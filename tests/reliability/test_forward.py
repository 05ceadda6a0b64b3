"""`sidemirror forward`: another machine's sessions in the local server, exactly as a local read
of the same files gives them, whatever is killed when."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tests.harness.server import Server
from tests.harness.waiting import wait_until
from tests.reliability.forwarding import Forwarder, mirror_of, session_items, wait_mirrored
from tests.reliability.harness import LONG_SESSION, MID_SESSION

PROJECT = "-home-dev-sample-project"


def _cwd_of(path: Path) -> str:
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if isinstance(record, dict) and record.get("cwd"):
            return str(record["cwd"])
    raise AssertionError("no cwd")


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_a_forwarded_session_has_the_items_a_local_read_gives(tmp_path: Path) -> None:
    local = Server(tmp_path / "local")
    reference = Server(tmp_path / "reference")  # reads the remote files directly
    remote_file = reference.claude / PROJECT / LONG_SESSION.name
    remote_file.parent.mkdir(parents=True)
    lines = _lines(LONG_SESSION)
    remote_file.write_bytes(b"".join(lines[: len(lines) // 2]))
    with local, reference:
        fwd = Forwarder(tmp_path / "remote", local, "devbox", reference.claude)
        try:
            fwd.start()
            with remote_file.open("ab") as f:  # the agent goes on writing while it is sent
                for line in lines[len(lines) // 2 :]:
                    f.write(line)
                    f.flush()
            wait_mirrored(local, fwd, [remote_file], 60)
            cwd = _cwd_of(LONG_SESSION)
            expected = wait_until(
                lambda: _stable(reference, cwd, LONG_SESSION.stem, len(lines)), 60, "reference"
            )
            got = wait_until(
                lambda: _stable(local, f"devbox:{cwd}", LONG_SESSION.stem, len(lines)),
                60,
                "forwarded session",
            )
            assert got == expected
            names = {w["name"] for w in local.get("/api/workspaces")["workspaces"]}
            assert f"devbox:{cwd.rsplit('/', 1)[-1]}" in names
        finally:
            fwd.stop()


def _stable(
    server: Server, directory: str, session: str, _lines: int = 0
) -> list[dict[str, Any]] | None:
    try:
        items = session_items(server, directory, session)
    except (StopIteration, OSError):
        return None
    again = session_items(server, directory, session)
    return items if items and items == again else None


def test_kill_9_of_forwarder_and_server_20_times_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    rng = random.Random(20)
    local = Server(tmp_path / "local", same_port=True)
    reference = Server(tmp_path / "reference")
    sources = [LONG_SESSION, MID_SESSION]
    remote = [reference.claude / PROJECT / s.name for s in sources]
    remote[0].parent.mkdir(parents=True)
    parts = [_split(_lines(s), 20) for s in sources]
    fwd = Forwarder(tmp_path / "remote", local, "box", reference.claude, "--frame-kib", "4")
    server_kills = 0
    try:
        local.start()
        for i in range(20):
            for path, file_parts in zip(remote, parts, strict=True):
                with path.open("ab") as f:
                    f.write(b"".join(file_parts[i]))
            before = _mirrored_bytes(local, fwd, remote)
            fwd.start()
            # Kill once some of this round's bytes arrived: mid-file, mid-frame or just after.
            wait_until(lambda b=before: _mirrored_bytes(local, fwd, remote) > b, 60, "progress")
            if rng.random() < 0.35:
                local.kill()
                server_kills += 1
                local.start()
            fwd.kill9()
        fwd.start()
        wait_mirrored(local, fwd, remote, 120)
        assert server_kills >= 3
        with reference:
            for source in sources:
                cwd = _cwd_of(source)
                session = source.stem
                expected = wait_until(lambda: _stable(reference, cwd, session), 60, "reference")  # noqa: B023
                got = wait_until(lambda: _stable(local, f"box:{cwd}", session), 60, "forwarded")  # noqa: B023
                ids = [item["id"] for item in got]
                lost = {i["id"] for i in expected} - set(ids)
                assert (len(lost), len(ids) - len(set(ids))) == (0, 0)
                assert got == expected
    finally:
        fwd.stop()
        local.stop()


def _split(lines: list[bytes], n: int) -> list[list[bytes]]:
    size = -(-len(lines) // n)
    return [lines[k * size : (k + 1) * size] for k in range(n)]


def _mirrored_bytes(server: Server, fwd: Forwarder, files: list[Path]) -> int:
    total = 0
    for path in files:
        copy = mirror_of(server, fwd.label, path, fwd.claude)
        total += copy.stat().st_size if copy.exists() else 0
    return total
