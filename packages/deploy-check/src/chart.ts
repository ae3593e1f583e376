import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { clusterOf, ROOT, type Cluster, type K8sObject } from './manifests';

/**
 * The Helm chart in deploy/helm/gateway, rendered by the real `helm template` (installed from the package
 * registries by scripts/deploy-tools.sh), as the objects a cluster would receive.
 */

export const CHART_DIR = path.join(ROOT, 'deploy/helm/gateway');
export const CHART_FILES_DIR = path.join(CHART_DIR, 'files');

export interface DeployTools {
  HELM: string;
  KUBECONFORM: string;
  SCHEMAS: string;
  KUBERNETES_VERSION: string;
}

let tools: DeployTools | undefined;

/** Installs the tools on first use (idempotent: instant once they are in .cache/deploy-tools). */
export function deployTools(): DeployTools {
  if (tools) return tools;
  const out = execFileSync('bash', [path.join(ROOT, 'scripts/deploy-tools.sh'), '--print-env'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const env = Object.fromEntries(out.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  for (const key of ['HELM', 'KUBECONFORM', 'SCHEMAS', 'KUBERNETES_VERSION']) {
    if (!env[key]) throw new Error(`scripts/deploy-tools.sh --print-env did not print ${key}`);
  }
  tools = env as unknown as DeployTools;
  return tools;
}

/** Services whose code is on this branch; the chart's optional components without it are rendered off. */
export function componentsWithoutCode(): string[] {
  return ['media', 'console'].filter((name) => !fs.existsSync(path.join(ROOT, 'services', name, 'package.json')));
}

/** `helm template` with these values files (relative to the chart) and --set pairs, as parsed objects. */
export function renderChart(valuesFiles: string[], set: Record<string, string> = {}): K8sObject[] {
  const { HELM, KUBERNETES_VERSION } = deployTools();
  const args = ['template', 'gateway', CHART_DIR, '--namespace', 'gateway', '--kube-version', KUBERNETES_VERSION,
    ...valuesFiles.flatMap((f) => ['--values', path.join(CHART_DIR, f)]),
    ...Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`])];
  const text = execFileSync(HELM, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const objects: K8sObject[] = [];
  // helm writes one document per object, each after `---` and a `# Source: <chart>/templates/<file>` line.
  for (const chunk of text.split(/^---$/m)) {
    const doc = parseDocument(chunk);
    if (doc.errors.length > 0) throw new Error(`helm template output: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS();
    if (value === null || value === undefined) continue;
    const source = /^# Source: (\S+)/m.exec(chunk)?.[1];
    objects.push({ file: source ? path.join(ROOT, 'deploy/helm', source) : CHART_DIR, doc: value });
  }
  return objects;
}

/**
 * What packages/deploy-check checks against the code: the chart's defaults, with the Secrets it makes for a test
 * cluster (so every secretKeyRef resolves) and the components whose code is not on this branch turned off.
 */
export function checkedCluster(): Cluster {
  const set = Object.fromEntries(componentsWithoutCode().map((name) => [`services.${name}.enabled`, 'false']));
  return clusterOf(renderChart(['ci/secrets-values.yaml'], set), CHART_FILES_DIR);
}
