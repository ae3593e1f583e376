#!/usr/bin/env bash
# Builds one service as it runs in its image: compiled JavaScript and production dependencies only.
#   deploy/docker/build-service.sh <service> <out-dir> [<entry.ts> ...]   (from a workspace with dev dependencies installed)
# <service> is a folder under services/, "simulators" (packages/simulators, the provider simulators' image), or
# "gateway" (packages/local-stack: every service in one process on the embedded engines, what scripts/start.sh runs).
# Further <entry.ts> files (repository paths) are compiled beside it, e.g. the benchmark's bench/gateway-process.ts.
# <out-dir> mirrors the repository (services/<service>/src/*.js, packages/<name>/src/*.js, protos/, config/), so
# every path the code finds from __dirname holds; node_modules/ has the service's production dependencies from
# the lockfile (pnpm deploy --prod, flat), and node_modules/@gw/<name> links to the compiled packages/<name>.
# Start it with: node <out-dir>/main.js
# The image's build stage runs this (deploy/docker/Dockerfile); so do scripts/start.sh, the benchmarks and
# packages/deploy-check's build test. GW_BUILD_ROOT builds another checkout's tree with this script (bench/ab.ts).
set -euo pipefail
service="${1:?usage: build-service.sh <service> <out-dir> [<entry.ts> ...]}"
out="${2:?usage: build-service.sh <service> <out-dir> [<entry.ts> ...]}"
extra_entries=("${@:3}")
ROOT="$(cd "${GW_BUILD_ROOT:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)"
cd "$ROOT"
if [[ -f "services/$service/src/main.ts" ]]; then dir="services/$service"
elif [[ "$service" == simulators ]]; then dir="packages/simulators"
elif [[ "$service" == gateway ]]; then dir="packages/local-stack"
else echo "build-service: services/$service/src/main.ts does not exist" >&2; exit 1
fi
for entry in "${extra_entries[@]}"; do
  [[ "$entry" == *.ts && -f "$entry" ]] || { echo "build-service: $entry is not a .ts file of the repository" >&2; exit 1; }
done
package="$(node -p 'require(process.argv[1]).name' "$ROOT/$dir/package.json")"
[[ ! -e "$out" || -z "$(ls -A "$out")" ]] || { echo "build-service: $out is not empty" >&2; exit 1; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
# pnpm deploy also links the deployed packages' bins under the workspace root joined with its target path
# (/tmp/tmp.X/deploy -> $ROOT/tmp/tmp.X/deploy/node_modules/.bin); nothing uses them, so they go with $work (and
# the directories left empty above them).
stray="$ROOT/${work#/}"
trap 'rm -rf "$work" "$stray"; rmdir -p "$(dirname "$stray")" 2>/dev/null || true' EXIT

# 1. TypeScript -> JavaScript: the service's entry point and every workspace module it imports (tsc follows the
#    imports through the workspace links to packages/*/src), type-checked, into the same layout under $out.
#    Workspace packages resolve through "paths" (through node_modules tsc would take them for libraries and not
#    emit them); at run time Node finds them through the links made in step 3.
node -e '
  const fs = require("node:fs");
  const path = require("node:path");
  const [root, out, entry, file, ...extra] = process.argv.slice(1);
  const paths = {};
  for (const group of ["packages", "services"]) {
    for (const name of fs.readdirSync(path.join(root, group))) {
      const manifest = path.join(root, group, name, "package.json");
      if (!fs.existsSync(manifest)) continue;
      const pkg = JSON.parse(fs.readFileSync(manifest, "utf8"));
      paths[pkg.name] = [path.join(root, group, name, pkg.main ?? "src/index.ts")];
      paths[`${pkg.name}/*`] = [path.join(root, group, name, "*")];
    }
  }
  fs.writeFileSync(file, JSON.stringify({
    extends: path.join(root, "tsconfig.json"),
    compilerOptions: {
      noEmit: false, outDir: out, rootDir: root, sourceMap: true,
      types: ["node"], typeRoots: [path.join(root, "node_modules/@types")], paths,
    },
    files: [path.join(root, entry, "src/main.ts"), ...extra.map((e) => path.join(root, e))],
    include: [],
  }, null, 2));
' "$ROOT" "$out" "$dir" "$work/tsconfig.json" "${extra_entries[@]}"
pnpm exec tsc -p "$work/tsconfig.json"

# 2. Production dependencies of the service (its workspace packages' included), flat, from the lockfile.
pnpm --filter "$package" deploy --prod --legacy --config.node-linker=hoisted "$work/deploy" > "$work/deploy.log" 2>&1 \
  || { cat "$work/deploy.log" >&2; exit 1; }
mv "$work/deploy/node_modules" "$out/node_modules"

# 3. The workspace packages become the compiled ones: each package.json points at src/index.js, and
#    node_modules/@gw/<name> links to it (Node resolves the link, so __dirname is the mirrored path). A dependency
#    the flat tree could not hoist (another version of it is at the top) is nested in the deployed package's own
#    node_modules: it moves with the package, or the package would run with the hoisted version.
mv "$out/node_modules/@gw" "$work/deployed-workspace"
mkdir -p "$out/node_modules/@gw"
for built in "$out"/packages/* "$out"/services/*; do
  [[ -d "$built" ]] || continue
  rel="${built#"$out"/}"
  name="$(node -e '
    const fs = require("node:fs");
    const [from, to] = process.argv.slice(1);
    const pkg = JSON.parse(fs.readFileSync(from, "utf8"));
    pkg.main = String(pkg.main ?? "src/index.ts").replace(/\.ts$/, ".js");
    delete pkg.types;
    delete pkg.devDependencies;
    fs.writeFileSync(to, JSON.stringify(pkg, null, 2) + "\n");
    process.stdout.write(pkg.name);
  ' "$ROOT/$rel/package.json" "$built/package.json")"
  [[ "$name" == @gw/* ]] || { echo "build-service: $rel is named $name, not @gw/<name>" >&2; exit 1; }
  ln -s "../../$rel" "$out/node_modules/$name"
  nested="$work/deployed-workspace/${name#@gw/}/node_modules"
  if [[ -d "$nested" ]]; then mv "$nested" "$built/node_modules"; fi
done

# 4. What the code reads at run time besides its modules: the protos (gRPC) and the default catalogue.
cp -R protos config "$out/"
# A service with built static files (the console's, made by its install) carries them too, in its own image or the gateway's.
for built in "$out"/services/*; do
  rel="services/$(basename "$built")"
  if [[ -d "$rel/dist" ]]; then cp -R "$rel/dist" "$out/$rel/dist"; fi
done
cp "$dir/package.json" "$out/package.json"
# The image's entry point, whatever the service: node main.js.
printf '// The entry point of the %s image (deploy/docker/Dockerfile).\nrequire("./%s/src/main.js");\n' "$service" "$dir" > "$out/main.js"
