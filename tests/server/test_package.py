"""The installed package carries the Chrome extension: a wheel built from the repository and
installed in a fresh venv (no checkout next to it) answers `sidemirror extension` with a folder
Chrome can load, and `--zip` writes the same files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import ROOT


def _clone_like(target: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked and new, not ignored)."""
    names = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    for name in names:
        source = ROOT / name
        if source.is_file() and not name.startswith(("tests/", "bench/")):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_a_wheel_installed_in_a_fresh_venv_carries_the_extension(tmp_path: Path) -> None:
    clone = _clone_like(tmp_path / "clone")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(clone)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (wheel,) = wheels.glob("sidemirror-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # --no-deps: `sidemirror extension` needs only the standard library, and the venv stays
    # quick to make; the wheel's own content is what is under test.
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    shutil.rmtree(clone)  # no checkout to fall back on

    def sidemirror(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(venv / "bin" / "sidemirror"), *args], cwd=tmp_path, capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip

    printed = sidemirror("extension")
    assert printed.returncode == 0, printed.stderr
    folder = Path(printed.stdout.strip())
    assert folder.is_relative_to(venv) and folder.name == "extension"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3
    shipped = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    source = {
        p.relative_to(ROOT / "extension").as_posix()
        for p in (ROOT / "extension").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped == source  # every file the side panel, popup and worker load

    zipped = sidemirror("extension", "--zip", str(tmp_path / "sidemirror.zip"))
    assert zipped.returncode == 0, zipped.stderr
    with zipfile.ZipFile(tmp_path / "sidemirror.zip") as zf:
        assert set(zf.namelist()) == source
