# Shared by scripts/demo and scripts/test: a virtual environment with kent-ops in it.
# Sourced, not run. Uses sudo only for apt, and only when not already root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@"
}
PYTHON="${PYTHON:-python3}"
VENV="${KENT_OPS_VENV:-$ROOT/.venv}"
if [ -z "${VIRTUAL_ENV:-}" ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    # Debian ships venv's ensurepip separately (python3-venv).
    "$PYTHON" -m venv "$VENV" 2>/dev/null || { rm -rf "$VENV"; apt_install python3-venv; "$PYTHON" -m venv "$VENV"; }
  fi
  # shellcheck disable=SC1091
  . "$VENV/bin/activate"
fi
