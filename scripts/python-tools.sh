#!/usr/bin/env bash
# Installs the Python tools the drills use into a venv under .cache/python-tools, from PyPI only:
#   schemathesis (the hostile-traffic drill's fuzzer), at the versions pinned in scripts/python-tools.txt.
# Idempotent: once installed (a stamp naming the pins' hash), it touches no network.
#   --print-env   then print SCHEMATHESIS= (all else goes to stderr)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.cache/python-tools"
PINS="$ROOT/scripts/python-tools.txt"
stamp="$VENV/.pins-$(sha256sum "$PINS" | cut -c1-16)"

if [[ ! -f "$stamp" ]]; then
  command -v python3 > /dev/null || { echo "python-tools: python3 is needed (with venv and pip)" >&2; exit 1; }
  echo "python-tools: installing $(grep -c '==' "$PINS") pinned packages into $VENV (PyPI)" >&2
  rm -rf "$VENV"
  pip_install=(--quiet --disable-pip-version-check --no-input --only-binary=:all: -r "$PINS")
  if python3 -m venv "$VENV" 2>/dev/null; then
    "$VENV/bin/python" -m pip install "${pip_install[@]}" 1>&2
  else
    # No venv module (Debian without python3-venv): the packages into a folder of their own, run through a wrapper.
    rm -rf "$VENV" && mkdir -p "$VENV/bin"
    python3 -m pip install --target "$VENV/site" "${pip_install[@]}" 1>&2
    printf '#!/usr/bin/env bash\nPYTHONPATH="%s${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m schemathesis.cli "$@"\n' "$VENV/site" > "$VENV/bin/schemathesis"
    chmod +x "$VENV/bin/schemathesis"
  fi
  touch "$stamp"
fi

if [[ "${1:-}" == "--print-env" ]]; then
  printf 'SCHEMATHESIS=%s\n' "$VENV/bin/schemathesis"
fi
