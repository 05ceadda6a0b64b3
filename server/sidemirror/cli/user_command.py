"""Put `sidemirror` on the user's PATH the way pipx does: a link in ~/.local/bin (or
$PIPX_BIN_DIR) to the venv's console script. `scripts/serve` runs this after installing:

    python -m sidemirror.cli.user_command VENV_SCRIPT

It speaks only when something changed (the first run, or a `sidemirror` it will not replace),
and then says where the command is and, if a new login shell would not find it, the exact line
to add to which file. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

COMMAND = "sidemirror"
TOLD_STAMP = ".sidemirror-command-told"  # in the venv: what was said last, so it is said once


def bin_dir() -> Path:
    """pipx's choice: $PIPX_BIN_DIR, else ~/.local/bin (on PATH in most login profiles)."""
    override = os.environ.get("PIPX_BIN_DIR")
    return Path(override) if override else Path.home() / ".local" / "bin"


def _on_path(folder: Path, path_value: str) -> bool:
    wanted = os.path.realpath(folder)
    return any(os.path.realpath(p) == wanted for p in path_value.split(os.pathsep) if p)


def _shell() -> str:
    name = Path(os.environ.get("SHELL") or "bash").name
    return name if name in ("bash", "zsh") else "bash"


def _login_path(shell: str) -> str:
    """PATH as a new login shell of the user's would have it ("" if that cannot be told)."""
    try:
        done = subprocess.run(
            [shell, "-lc", 'printf %s "$PATH"'],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def profile_file(shell: str) -> Path:
    """The file a login shell of `shell` reads for PATH: zsh ~/.zprofile; bash the first of
    ~/.bash_profile, ~/.bash_login, else ~/.profile (bash reads only the first it finds)."""
    home = Path.home()
    if shell == "zsh":
        return home / ".zprofile"
    for name in (".bash_profile", ".bash_login"):
        if (home / name).exists():
            return home / name
    return home / ".profile"


def _display(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text == home or text.startswith(home + os.sep) else text


def path_advice(folder: Path) -> list[str]:
    """What to do so that a new terminal finds commands in `folder` ([] when it will)."""
    if _on_path(folder, os.environ.get("PATH", "")):
        return []
    shell = _shell()
    if _on_path(folder, _login_path(shell)):
        return [f"Open a new terminal to use it ({_display(folder)} joins PATH at login)."]
    shown = _display(folder).replace("~", "$HOME", 1)
    return [
        f"{_display(folder)} is not on your PATH. Add this line to {_display(profile_file(shell))}"
        " and open a new terminal:",
        f'    export PATH="{shown}:$PATH"',
    ]


def install(script: Path, folder: Path) -> list[str]:
    """Link `folder/sidemirror` to `script` unless a `sidemirror` is there already; the lines
    to tell the user (before the once-only filter)."""
    link = folder / COMMAND
    if link.is_symlink() and os.path.realpath(link) == os.path.realpath(script):
        return [f"The `{COMMAND}` command: {_display(link)} → {script}", *path_advice(folder)]
    if link.exists() or link.is_symlink():
        return [
            f"{_display(link)} already exists (→ {os.path.realpath(link)}) and was left as it "
            f"is; this checkout's command is {script}"
        ]
    folder.mkdir(parents=True, exist_ok=True)
    link.symlink_to(script)
    return [f"Installed the `{COMMAND}` command: {_display(link)} → {script}", *path_advice(folder)]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m sidemirror.cli.user_command VENV_SCRIPT", file=sys.stderr)
        return 2
    script = Path(argv[0]).absolute()
    folder = bin_dir()
    try:
        lines = install(script, folder)
    except OSError as exc:
        print(f"Could not put `{COMMAND}` on your PATH ({exc}); run {script}", file=sys.stderr)
        return 0  # the server still starts
    # Said once per state (where the link is, where it points, whether PATH needs a line),
    # not on every start: the first line's verb changes between runs, the state does not.
    link = folder / COMMAND
    state = f"{link} -> {os.path.realpath(link)}; advice: {len(lines) > 1}"
    stamp = script.parent.parent / TOLD_STAMP
    try:
        if stamp.read_text() == state:
            return 0
    except OSError:
        pass
    print("\n".join(lines), file=sys.stderr)
    with contextlib.suppress(OSError):
        stamp.write_text(state)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
