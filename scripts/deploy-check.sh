#!/usr/bin/env bash
# Renders the Helm chart (deploy/helm/gateway) and checks every object against the Kubernetes JSON schemas,
# offline, with tools from the package registries (scripts/deploy-tools.sh installs them into .cache/deploy-tools).
# Two renderings: the chart's defaults, and every option on (ci/secrets-values.yaml + ci/monitoring-values.yaml).
# A failure names the rendering, the object (kind and name) and the field. The jest test
# packages/deploy-check/src/chart-schema.test.ts runs this script, so the test command runs it in CI.
# ServiceMonitor objects are not schema-checked: theirs is a CRD whose schema no registry package carries.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
eval "$(bash "$ROOT/scripts/deploy-tools.sh" --print-env)"
# DEPLOY_CHECK_CHART: another copy of the chart (the test of this script breaks one on purpose).
CHART="${DEPLOY_CHECK_CHART:-$ROOT/deploy/helm/gateway}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

"$HELM" lint --strict "$CHART" --kube-version "$KUBERNETES_VERSION" \
  --values "$CHART/ci/secrets-values.yaml" --values "$CHART/ci/monitoring-values.yaml" > "$out/lint.log" 2>&1 \
  || { cat "$out/lint.log" >&2; echo "deploy-check: helm lint failed" >&2; exit 1; }

status=0
check() { # name, helm template arguments...
  local name="$1"; shift
  if ! "$HELM" template gateway "$CHART" --namespace gateway --kube-version "$KUBERNETES_VERSION" "$@" > "$out/$name.yaml" 2> "$out/$name.err"; then
    echo "deploy-check: the chart does not render with $name values:" >&2; cat "$out/$name.err" >&2; status=1; return
  fi
  if ! "$KUBECONFORM" -strict -summary -skip ServiceMonitor \
      -schema-location "$SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$out/$name.yaml" > "$out/$name.log" 2>&1; then
    echo "deploy-check: $name values: objects that fail the Kubernetes $KUBERNETES_VERSION schemas:" >&2
    sed "s|$out/$name.yaml - ||" "$out/$name.log" >&2
    status=1; return
  fi
  echo "deploy-check: $name values: $(tail -n 1 "$out/$name.log")"
}
check default
check all-options --values "$CHART/ci/secrets-values.yaml" --values "$CHART/ci/monitoring-values.yaml"
exit $status
