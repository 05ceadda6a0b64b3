"""The token kept in the data dir: made once, 0600, read back as it is; a damaged file or one
that is not certainly ours is replaced rather than trusted (token_store.py). The port kept
beside it is a preference only (data_dir.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from sidemirror.data_dir import last_port, remember_port
from sidemirror.token_store import TOKEN_FILE, load_token, rotate_token

NOBODY = 65534


def test_the_token_is_made_once_and_kept(tmp_path: Path) -> None:
    first = load_token(tmp_path / "data")
    assert load_token(tmp_path / "data") == first and len(first) >= 43
    path = tmp_path / "data" / TOKEN_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_rotate_replaces_it(tmp_path: Path) -> None:
    first = load_token(tmp_path)
    second = rotate_token(tmp_path)
    assert second != first and load_token(tmp_path) == second


@pytest.mark.parametrize("content", ["", "short", "x" * 43 + " with spaces", "\xff" * 50])
def test_a_damaged_token_file_is_replaced(tmp_path: Path, content: str) -> None:
    (tmp_path / TOKEN_FILE).write_text(content, encoding="latin-1")
    token = load_token(tmp_path)
    assert token != content.strip() and len(token) >= 43
    assert (tmp_path / TOKEN_FILE).read_text().strip() == token


def test_a_token_file_others_can_write_is_not_trusted(tmp_path: Path) -> None:
    planted = "p" * 43
    (tmp_path / TOKEN_FILE).write_text(planted)
    os.chmod(tmp_path / TOKEN_FILE, 0o666)  # anyone could have chosen it
    assert load_token(tmp_path) != planted
    assert stat.S_IMODE((tmp_path / TOKEN_FILE).stat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_token_file_of_another_user_is_not_trusted(tmp_path: Path) -> None:
    planted = "q" * 43
    (tmp_path / TOKEN_FILE).write_text(planted)
    os.chown(tmp_path / TOKEN_FILE, NOBODY, NOBODY)
    assert load_token(tmp_path) != planted
    assert (tmp_path / TOKEN_FILE).stat().st_uid == os.geteuid()


def test_the_last_port_is_kept_and_a_bad_one_is_no_preference(tmp_path: Path) -> None:
    assert last_port(tmp_path) is None
    remember_port(tmp_path, 47473)
    assert last_port(tmp_path) == 47473
    for text in ("", "abc", "0", "70000", "-1"):
        (tmp_path / "port").write_text(text)
        assert last_port(tmp_path) is None
    remember_port(tmp_path / "missing" / "deeper", 1)  # cannot be written: no error either
