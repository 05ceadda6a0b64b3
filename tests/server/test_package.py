"""The installed package carries the Chrome extension and its data files: a wheel built from the
repository (pyproject.toml alone) and installed with its dependencies in a fresh venv (no
checkout next to it) answers `sidemirror extension` with a folder Chrome can load, `--zip`
writes the same files, which load in Chromium once unzipped, the price table and demo session
are there, and the server imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.harness.paths import ROOT

EXTENSION_ID = "mboojbmhcigehknaafejhibpmmdjpgbn"  # pinned by the manifest's key


def _loads_in_chromium(folder: Path, profile: Path) -> str:
    """Load the unzipped extension in Debian's Chromium, as a user's "Load unpacked" does; the
    id its service worker runs under. No page of it is opened, so it contacts no server."""
    from playwright.sync_api import sync_playwright

    args = [
        f"--disable-extensions-except={folder}",
        f"--load-extension={folder}",
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-features=DisableLoadExtensionCommandLineSwitch",
    ]
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path="/usr/bin/chromium", headless=False, args=args
        )
        try:
            worker = (
                context.service_workers[0]
                if context.service_workers
                else context.wait_for_event("serviceworker", timeout=30_000)
            )
            assert worker.url.endswith("/service-worker.js"), worker.url
            return worker.url.split("/")[2]
        finally:
            context.close()


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


@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_carries_the_extension(tmp_path: Path) -> None:
    clone = _clone_like(tmp_path / "clone")
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(clone)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    (wheel,) = wheels.glob("sidemirror-*.whl")
    venv = tmp_path / "venv"
    # No pip of its own (the quick part): this interpreter's pip installs into it, from the
    # package indexes pip is configured with, as scripts/_venv.sh installs.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", str(wheel)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    shutil.rmtree(clone)  # no checkout to fall back on
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's code only

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    def sidemirror(*args: str) -> subprocess.CompletedProcess[str]:
        return run(str(venv / "bin" / "sidemirror"), *args)

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
        zf.extractall(tmp_path / "unzipped")
    assert _loads_in_chromium(tmp_path / "unzipped", tmp_path / "profile") == EXTENSION_ID

    # The data files travel with their package, and the declared dependencies are enough for
    # the whole server to import.
    data = ROOT / "server" / "sidemirror" / "data"
    packaged = folder.parent / "data"
    assert {p.relative_to(packaged) for p in packaged.rglob("*") if p.is_file()} >= {
        p.relative_to(data) for p in data.rglob("*") if p.is_file() and p.suffix != ".py"
    }
    reads = (
        "import sidemirror, sidemirror.app\n"
        "from sidemirror.core.pricing import pricing_as_of\n"
        "from sidemirror.sources.claude.demo import sample_lines\n"
        "print(sidemirror.__file__, pricing_as_of(), len(sample_lines()))"
    )
    imported = run(python, "-c", reads)
    assert imported.returncode == 0, imported.stderr
    where, as_of, demo_lines = imported.stdout.split()
    assert Path(where).is_relative_to(venv) and as_of and int(demo_lines) > 0
