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
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --only-binary=:all: -r "$PINS" 1>&2
  touch "$stamp"
fi

if [[ "${1:-}" == "--print-env" ]]; then
  printf 'SCHEMATHESIS=%s\n' "$VENV/bin/schemathesis"
fi
