# Sourced by the scripts: create the project venv once and install the package into it.
# SIDEMIRROR_VENV overrides the location (default: .venv in the repo).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SIDEMIRROR_VENV:-$ROOT/.venv}"
installed_since_last_change() {  # the stamp exists and is newer than the packaging file
  [ -f "$1" ] && [ ! "$ROOT/pyproject.toml" -nt "$1" ]
}
ensure_venv() {
  local extra="${1:-}"
  if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating virtualenv in $VENV" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
  fi
  local stamp="$VENV/.sidemirror-installed$extra"
  # An install with the test extras is the plain install too (scripts/serve after scripts/test).
  if [ -z "$extra" ] && installed_since_last_change "$VENV/.sidemirror-installedtest"; then
    return 0
  fi
  if ! installed_since_last_change "$stamp"; then
    echo "Installing sidemirror${extra:+ with [$extra]} into $VENV" >&2
    "$VENV/bin/python" -m pip install -q -e "$ROOT${extra:+[$extra]}"
    touch "$stamp"
  fi
  # The server's bytecode, written now: an editable install leaves it to the first import, and
  # a shell with PYTHONDONTWRITEBYTECODE set would compile the whole server on every start
  # (about half a second of it). Up to date files are skipped.
  "$VENV/bin/python" -m compileall -q "$ROOT/server/sidemirror" >/dev/null
}
