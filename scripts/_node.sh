# Sourced by the scripts: the extension's Node tools (package.json at the repo root, versions
# pinned exactly in package-lock.json), installed with `npm ci` once and again when the lock
# changes. Node.js and npm come from the machine (Debian's nodejs, or any 20+).
ensure_node_tools() {
  if ! command -v npm >/dev/null; then
    echo "Installing Node.js and npm (Debian) for the extension's checks and tests" >&2
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  local stamp="$ROOT/node_modules/.sidemirror-installed"
  if [ ! -f "$stamp" ] || [ "$ROOT/package-lock.json" -nt "$stamp" ]; then
    echo "Installing the extension's Node tools (npm ci)" >&2
    (cd "$ROOT" && npm ci --no-audit --no-fund --silent)
    touch "$stamp"
  fi
}
