# Sourced by the scripts: create the project venv once and install the package into it.
# SIDEMIRROR_VENV overrides the location (default: .venv in the repo).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SIDEMIRROR_VENV:-$ROOT/.venv}"
ensure_venv() {
  local extra="${1:-}"
  if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating virtualenv in $VENV" >&2
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
  fi
  local stamp="$VENV/.sidemirror-installed$extra"
  if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ] || [ "$ROOT/setup.py" -nt "$stamp" ]; then
    echo "Installing sidemirror${extra:+ with [$extra]} into $VENV" >&2
    "$VENV/bin/python" -m pip install -q -e "$ROOT${extra:+[$extra]}"
    touch "$stamp"
  fi
}
