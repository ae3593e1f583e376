#!/usr/bin/env bash
# Compiles the single-process gateway (packages/local-stack and every service it starts) into .cache/gateway the
# way the images are built (deploy/docker/build-service.sh gateway), so scripts/start.sh runs JavaScript with plain
# node, as production does, instead of compiling TypeScript at run time. Built again only when the sources changed:
# the stamp covers the commit, the uncommitted changes and the untracked files (outside a git checkout: every time).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
cd "$GW_ROOT"
out="$GW_ROOT/.cache/gateway"
stamp=""
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  stamp="$({
    git rev-parse HEAD
    git diff HEAD --binary
    git ls-files --others --exclude-standard -z | xargs -0 -r sha256sum
  } | sha256sum | cut -d' ' -f1)"
fi
if [[ -n "$stamp" && -f "$out/.source-stamp" && "$(cat "$out/.source-stamp")" == "$stamp" ]]; then exit 0; fi
echo "build-gateway: compiling the gateway into $out" >&2
# Built beside it and swapped in whole: a build that fails leaves the previous one as it was, and of two starts
# building at once the build that lands first is kept.
next="$(mktemp -d "$out.next.XXXXXX")"
trap 'rm -rf "$next"' EXIT
bash deploy/docker/build-service.sh gateway "$next"
printf '%s\n' "$stamp" > "$next/.source-stamp"
rm -rf "$out"
mv -T "$next" "$out" 2> /dev/null || true
