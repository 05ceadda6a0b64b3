"""Private folders and files whatever the umask, and trusting only what is ours (core/private.py,
runtime.py)."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sidemirror.activity.log import ActivityLog
from sidemirror.core.debug_trace import DebugTrace
from sidemirror.core.hub import Hub
from sidemirror.core.item_log import ItemLog
from sidemirror.core.models import UserEvent
from sidemirror.core.private import private_dir, untrusted, write_private
from sidemirror.core.projection import Projector
from sidemirror.core.store import SessionUpdate, Store
from sidemirror.ingest.journal import IngestJournal
from sidemirror.runtime_file import (
    UntrustedRuntimeFile,
    default_runtime_dir,
    prepare_runtime_dir,
    read_runtime_file,
    write_runtime_file,
)
from sidemirror.sources.base import Emitted
from sidemirror.sources.files.merge_order import Entry, MergeOrder

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


@pytest.fixture
def lax_umask() -> Iterator[None]:
    old = os.umask(0)  # every mode bit allowed: only explicit modes keep files private
    try:
        yield
    finally:
        os.umask(old)


def modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")}


def test_every_writer_of_the_data_dir_makes_0700_folders_and_0600_files(
    tmp_path: Path, lax_umask: None
) -> None:
    data = private_dir(tmp_path / "data")
    activity = ActivityLog(data / "activity", ring_size=2)
    for n in range(6):  # past twice the ring: compaction rewrites the file
        activity.report({"command": "click", "args": [f"@e{n}"], "workspace": "/w"})
    activity.close()
    store = Store(Hub(16), Projector(), data / "spill" / "1")
    journal = IngestJournal(data / "ingest")
    trace = DebugTrace(data / "trace" / "events.jsonl", store)
    store.taps.append(trace)
    asyncio.run(journal.commit(store, "/w", "events", [[Emitted("s1", UserEvent(content="hi"))]]))
    spilled = ItemLog(data / "spill" / "1" / "x.jsonl", window=1)
    for seq in (1, 2, 3):
        spilled.append(UserEvent(content="spill me", seq=seq))
    order = MergeOrder(data / "merge" / "order.jsonl", "e1")
    order.rewrite()
    order.append([Entry("", 10, 1)])
    write_private(data / "server_id", "x")
    for closer in (journal.close, trace.close, spilled.close, store.close):
        closer()
    found = modes(data)
    for kind in ("activity", "spill", "ingest", "trace", "merge", "server_id"):
        assert any(name.startswith(kind) for name in found), (kind, found)
    for name, mode in found.items():
        want = 0o700 if (data / name).is_dir() else 0o600
        assert mode == want, (name, oct(mode))


def test_private_dir_tightens_an_existing_folder(tmp_path: Path, lax_umask: None) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    private_dir(loose)
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700


def test_write_private_is_atomic_and_exclusive_on_demand(tmp_path: Path) -> None:
    path = tmp_path / "f"
    write_private(path, "one", exclusive=True)
    with pytest.raises(FileExistsError):
        write_private(path, "two", exclusive=True)
    write_private(path, "three")
    assert path.read_text() == "three"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]  # no temporary file left behind


# --- trusting a runtime file ---


def _runtime_file(run: Path) -> Path:
    (found,) = run.glob("server-*.json")
    return found


def test_our_runtime_file_is_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_runtime_file(run, {"port": 1, "token": "t"})
    info = read_runtime_file(run)
    assert info is not None and (info["port"], info["token"]) == (1, "t")
    assert read_runtime_file(tmp_path / "none") is None


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        (lambda run: os.chmod(run, 0o777), "group or others can write to it (mode 0777)"),
        (lambda run: os.chmod(_runtime_file(run), 0o666), "group or others can write"),
        (lambda run: os.chmod(run, 0o720), "group or others can write to it (mode 0720)"),
    ],
)
def test_a_runtime_file_others_can_write_is_refused(
    tmp_path: Path, spoil: object, reason: str
) -> None:
    run = tmp_path / "run"
    write_runtime_file(run, {"port": 1, "token": "t"})
    spoil(run)  # type: ignore[operator]
    with pytest.raises(UntrustedRuntimeFile) as caught:
        read_runtime_file(run)
    assert reason in str(caught.value) and str(run) in str(caught.value)


@as_root
@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_runtime_file_of_another_user_is_refused(tmp_path: Path, what: str) -> None:
    run = tmp_path / "run"
    write_runtime_file(run, {"port": 1, "token": "theirs"})
    os.chown(run if what == "folder" else _runtime_file(run), NOBODY, NOBODY)
    with pytest.raises(UntrustedRuntimeFile, match=f"belongs to uid {NOBODY}, not to you"):
        read_runtime_file(run)


def test_a_symlinked_runtime_file_or_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write_runtime_file(real, {"port": 1, "token": "t"})
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    with pytest.raises(UntrustedRuntimeFile, match="symbolic link"):
        read_runtime_file(linked)
    run = private_dir(tmp_path / "run")
    (run / _runtime_file(real).name).symlink_to(_runtime_file(real))
    with pytest.raises(UntrustedRuntimeFile, match="symbolic link"):
        read_runtime_file(run)


@as_root
def test_the_server_will_not_write_its_token_into_another_users_folder(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    with pytest.raises(UntrustedRuntimeFile, match="belongs to uid"):
        prepare_runtime_dir(theirs)
    assert not list(theirs.iterdir())


def test_without_xdg_runtime_dir_the_runtime_dir_is_in_our_own_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert default_runtime_dir() == tmp_path / ".cache" / "sidemirror" / "run"
    xdg = private_dir(tmp_path / "xdg")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    assert default_runtime_dir() == xdg / "sidemirror"


def test_untrusted_names_the_reason(tmp_path: Path) -> None:
    assert untrusted(tmp_path / "missing", folder=True) == "it does not exist"
    (tmp_path / "f").write_text("")
    assert untrusted(tmp_path / "f", folder=True) == "it is not a folder"
    assert untrusted(tmp_path, folder=False) == "it is not a regular file"


def test_store_write_keeps_working_with_the_private_spill(tmp_path: Path) -> None:
    store = Store(Hub(4), Projector(), tmp_path / "spill")
    ws = store.ensure_workspace("/w", "events")
    log = store.ensure_session(ws, "s", "events", "e")
    store.write(log, SessionUpdate(items=[UserEvent(content="x")]))
    assert [i.content for i in log.items if isinstance(i, UserEvent)] == ["x"]
