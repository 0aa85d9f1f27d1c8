#!/usr/bin/env bash
# Install what the artifact needs on a Debian 12 machine: the Debian packages in
# workflow/debian-packages.txt (and in each further list given, e.g. the tests'), a pinned uv, and
# the locked Python environment (.venv).
# Idempotent: a second run checks and does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
TOOLS=.tools

say() { printf 'setup: %s\n' "$*"; }

# 1. Debian packages.
mapfile -t wanted < <(cat workflow/debian-packages.txt "$@" | grep -v '^\s*#' | grep -v '^\s*$')
missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=(); elif sudo -n true 2>/dev/null; then sudo=(sudo); else
    say "these Debian packages are missing: ${missing[*]}"
    say "install them as root, then run make again:"
    say "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
  say "installing Debian packages: ${missing[*]} (a few minutes the first time)"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. A pinned uv in its own virtual environment (Debian's pip refuses system installs).
python=/usr/bin/python3.11
[ -x "$python" ] || python=$(command -v python3.11 || true)
[ -n "$python" ] || { say "python3.11 not found: install Debian's python3 package"; exit 1; }
if [ ! -x "$TOOLS/uv/bin/uv" ] || [ "$("$TOOLS/uv/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  say "installing uv $UV_VERSION into $TOOLS/uv"
  rm -rf "$TOOLS/uv"
  "$python" -m venv "$TOOLS/uv"
  "$TOOLS/uv/bin/pip" install -q --disable-pip-version-check "uv==$UV_VERSION"
fi

# 3. The locked Python environment: exactly uv.lock, never re-resolved.
# System certificates, as pip and apt use: proxies with their own CA then work too.
export UV_PROJECT_ENVIRONMENT=.venv UV_PYTHON_DOWNLOADS=never UV_SYSTEM_CERTS=1
if [ ! -f .venv/.synced ] || [ uv.lock -nt .venv/.synced ] || [ pyproject.toml -nt .venv/.synced ]; then
  say "creating the Python environment .venv from uv.lock"
  # --compile-bytecode: every step starts a Python (Snakemake runs each job in one), and where
  # PYTHONDONTWRITEBYTECODE is set each would compile Snakemake, pandas and the rest again:
  # 13 s before a job could start, 2 s with the bytecode written once here.
  "$TOOLS/uv/bin/uv" sync --frozen --quiet --compile-bytecode --python "$python"
  touch .venv/.synced
fi
