"""The native messaging host the extension pairs through: Chrome's framing, the caller check,
what a `pair` answers (and from which files), and the manifest and launcher install-host writes.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sidemirror.cli import main as cli_main
from sidemirror.native_host.framing import (
    MAX_IN,
    FramingError,
    encode_message,
    read_message,
)
from sidemirror.native_host.host import serve
from sidemirror.native_host.manifest import (
    HOST_NAME,
    LAUNCHER_NAME,
    extension_id_of,
    install_host,
)
from sidemirror.panel_credential import load_panel_credential
from sidemirror.runtime_file import write_runtime_file
from sidemirror.web.about import load_server_id
from sidemirror.web.rules import PINNED_EXTENSION_ID

from tests.harness.paths import ROOT

ORIGIN = f"chrome-extension://{PINNED_EXTENSION_ID}/"
TOKEN = "native-host-test-token-0123456789"


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return struct.pack("=I", len(body)) + body


def replies(data: bytes) -> list[dict[str, Any]]:
    stream = io.BytesIO(data)
    out = []
    while (message := read_message(stream)) is not None:
        out.append(message)
    return out


def run_host(argv: list[str], data: bytes) -> tuple[int, list[dict[str, Any]]]:
    out = io.BytesIO()
    code = serve(argv, io.BytesIO(data), out)
    return code, replies(out.getvalue())


@pytest.fixture
def running(tmp_path: Path) -> dict[str, Any]:
    """A server's files as a running one leaves them: its runtime file, its data dir."""
    data = tmp_path / "data"
    runtime = tmp_path / "run"
    write_runtime_file(runtime, {"port": 47999, "token": TOKEN, "pid": os.getpid()}, data)
    return {
        "runtime": runtime,
        "argv": ["--allow", PINNED_EXTENSION_ID, "--runtime-dir", str(runtime)],
        "panel": load_panel_credential(data),
        "server_id": load_server_id(data),
    }


# --- framing ---


def test_messages_are_a_native_endian_length_then_json() -> None:
    encoded = encode_message({"type": "pair", "port": 1})
    body = b'{"type":"pair","port":1}'
    assert encoded == struct.pack("=I", len(body)) + body
    assert read_message(io.BytesIO(encoded)) == {"type": "pair", "port": 1}
    assert read_message(io.BytesIO(b"")) is None  # Chrome closed the pipe


@pytest.mark.parametrize(
    "data",
    [
        b"\x05\x00",  # a cut length
        struct.pack("=I", 10) + b"{}",  # a cut body
        struct.pack("=I", MAX_IN + 1),  # too long for a pairing request
        frame([1, 2]),  # not an object
        struct.pack("=I", 3) + b"\xff\xfe{",  # not UTF-8
    ],
)
def test_a_broken_message_is_refused(data: bytes) -> None:
    with pytest.raises(FramingError):
        read_message(io.BytesIO(data))


# --- the caller ---


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "chrome-extension://" + "a" * 32 + "/",
        f"chrome-extension://{PINNED_EXTENSION_ID}",
        "https://evil.example/",
    ],  # fmt: skip
)
def test_only_the_allowed_extension_gets_an_answer(
    running: dict[str, Any], origin: str | None
) -> None:
    argv = [*running["argv"], *([origin] if origin else [])]
    code, out = run_host(argv, frame({"type": "pair", "port": 47999}))
    assert code == 1
    assert out == [
        {"ok": False, "error": {"code": "forbidden_origin", "message": out[0]["error"]["message"]}}
    ]
    assert TOKEN not in json.dumps(out) and running["panel"] not in json.dumps(out)


def test_pair_answers_the_token_panel_credential_port_and_server_id(
    running: dict[str, Any],
) -> None:
    # Chrome on Windows adds --parent-window: ignored.
    argv = [*running["argv"], ORIGIN, "--parent-window=0"]
    code, out = run_host(argv, frame({"type": "pair", "port": 47999}) + frame({"type": "pair"}))
    assert code == 0
    want = {"ok": True, "port": 47999, "server_id": running["server_id"], "token": TOKEN,
            "panel": running["panel"]}  # fmt: skip
    assert out == [want, want]


def test_pair_for_a_port_where_no_server_of_ours_runs(running: dict[str, Any]) -> None:
    code, out = run_host([*running["argv"], ORIGIN], frame({"type": "pair", "port": 1234}))
    assert code == 0 and out[0]["error"]["code"] == "not_our_server"
    _, out = run_host([*running["argv"], ORIGIN], frame({"type": "hello"}))
    assert out[0]["error"]["code"] == "unknown_message"


def test_a_runtime_file_others_could_write_is_not_trusted(running: dict[str, Any]) -> None:
    (path,) = running["runtime"].iterdir()
    path.chmod(0o666)
    _, out = run_host([*running["argv"], ORIGIN], frame({"type": "pair", "port": 47999}))
    assert out[0]["error"]["code"] == "untrusted_runtime_file"
    assert TOKEN not in json.dumps(out)


# --- the manifest and the launcher ---


def test_the_pinned_id_is_the_one_the_manifest_key_gives() -> None:
    assert extension_id_of(ROOT / "extension" / "manifest.json") == PINNED_EXTENSION_ID


def test_the_host_name_follows_chromes_rule() -> None:
    assert re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)*", HOST_NAME)


def test_install_writes_a_manifest_for_our_extension_only_and_a_private_launcher(
    tmp_path: Path, running: dict[str, Any]
) -> None:
    old = os.umask(0)  # a lax umask does not widen the modes
    try:
        (written,) = install_host(
            [tmp_path / "nmh"], tmp_path / "host", [PINNED_EXTENSION_ID], [running["runtime"]]
        )
    finally:
        os.umask(old)
    assert written == tmp_path / "nmh" / f"{HOST_NAME}.json"
    manifest = json.loads(written.read_text())
    launcher = tmp_path / "host" / LAUNCHER_NAME
    assert manifest == {
        "name": HOST_NAME,
        "description": manifest["description"],
        "path": str(launcher),
        "type": "stdio",
        "allowed_origins": [ORIGIN],
    }
    assert stat.S_IMODE(written.stat().st_mode) == 0o644
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o700
    assert stat.S_IMODE(launcher.parent.stat().st_mode) == 0o700
    # The launcher is what Chrome runs: whatever environment it has, it answers.
    done = subprocess.run(
        [str(launcher), ORIGIN], input=frame({"type": "pair", "port": 47999}),
        capture_output=True, timeout=60, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (answer,) = replies(done.stdout)
    assert answer["token"] == TOKEN and answer["panel"] == running["panel"]


def test_install_host_command_writes_to_the_folders_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]
    argv = ["extension", "install-host", "--launcher-dir", str(tmp_path / "host"),
            "--runtime-dir", str(tmp_path / "run")]  # fmt: skip
    for d in dirs:
        argv += ["--dir", str(d)]
    assert cli_main(argv) == 0
    for d in dirs:
        manifest = json.loads((d / f"{HOST_NAME}.json").read_text())
        assert manifest["allowed_origins"] == [ORIGIN]
        assert manifest["path"] == str(tmp_path / "host" / LAUNCHER_NAME)
    assert capsys.readouterr().out.count("wrote ") == 2
    script = (tmp_path / "host" / LAUNCHER_NAME).read_text()
    assert sys.executable in script and str(tmp_path / "run") in script


def test_default_folders_are_chrome_and_chromium_of_this_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidemirror.native_host.manifest import default_manifest_dirs

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    if sys.platform == "linux":
        assert default_manifest_dirs() == [
            tmp_path / ".config" / "google-chrome" / "NativeMessagingHosts",
            tmp_path / ".config" / "chromium" / "NativeMessagingHosts",
        ]
