#!/usr/bin/env bash
# Installs what scripts/deploy-check.sh needs into .cache/deploy-tools, from the package registries only:
#   helm and kubeconform, built with `go install` (Go module proxy);
#   the Kubernetes JSON schemas, from the kubernetes-validate wheel on PyPI (pinned by hash): one Kubernetes
#   version's strict schemas, with their references made relative so kubeconform reads them offline.
# Idempotent and quick once installed; the first run builds helm (a few minutes on 2 cores).
#   --print-env   then print HELM=, KUBECONFORM=, SCHEMAS= and KUBERNETES_VERSION= lines (all else goes to stderr)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.cache/deploy-tools"
HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.7.0
SCHEMAS_PACKAGE=kubernetes-validate==1.37.0
SCHEMAS_SHA256=85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9
# The Kubernetes version the chart is checked against (its kubeVersion floor is 1.30).
KUBERNETES_VERSION=1.33.0
mkdir -p "$TOOLS/bin"

install_go_tool() { # name version package
  local stamp="$TOOLS/bin/.$1-$2"
  [[ -x "$TOOLS/bin/$1" && -f "$stamp" ]] && return 0
  command -v go > /dev/null || { echo "deploy-tools: go is needed to build $1 (go install $3@$2)" >&2; exit 1; }
  echo "deploy-tools: building $1 $2 (go install)" >&2
  GOBIN="$TOOLS/bin" GOFLAGS=-mod=mod go install "$3@$2" 1>&2
  rm -f "$TOOLS/bin/.$1-"*; touch "$stamp"
}
install_go_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm
install_go_tool kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform

SCHEMAS="$TOOLS/schemas/v$KUBERNETES_VERSION"
if [[ ! -f "$SCHEMAS/.complete" ]]; then
  echo "deploy-tools: fetching Kubernetes $KUBERNETES_VERSION JSON schemas ($SCHEMAS_PACKAGE from PyPI)" >&2
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$download" "$SCHEMAS_PACKAGE"
  wheel="$(ls "$download"/*.whl)"
  echo "$SCHEMAS_SHA256  $wheel" | sha256sum --check --quiet
  rm -rf "$SCHEMAS" && mkdir -p "$SCHEMAS"
  python3 - "$wheel" "$SCHEMAS" "v$KUBERNETES_VERSION-local-strict" <<'PY'
import json, sys, zipfile
wheel, out, folder = sys.argv[1:]
prefix = f"kubernetes_validate/kubernetes-json-schema/{folder}/"
count = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if not name.startswith(prefix) or not name.endswith(".json"):
            continue
        # The package resolves "/api/_definitions.json" against each schema's https $id through its own registry;
        # without the $id and with a relative reference, the sibling file resolves offline.
        text = z.read(name).decode("utf-8").replace('"/api/_definitions.json#', '"_definitions.json#')
        base = name[len(prefix):]
        if base != "_definitions.json":
            schema = json.loads(text)
            schema.pop("$id", None)
            text = json.dumps(schema)
        with open(f"{out}/{base}", "w", encoding="utf-8") as f:
            f.write(text)
        count += 1
if count == 0:
    sys.exit(f"no schemas under {prefix} in {wheel}")
PY
  touch "$SCHEMAS/.complete"
fi

if [[ "${1:-}" == "--print-env" ]]; then
  printf 'HELM=%s\nKUBECONFORM=%s\nSCHEMAS=%s\nKUBERNETES_VERSION=%s\n' \
    "$TOOLS/bin/helm" "$TOOLS/bin/kubeconform" "$SCHEMAS" "$KUBERNETES_VERSION"
fi
