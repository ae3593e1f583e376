import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

/**
 * Reads the deployment artefacts as plain data: docker-compose.yml (with compose's `${VAR:-default}`
 * interpolation), the objects the Helm chart renders (chart.ts) and the Dockerfile, and resolves what a
 * container would see: its environment, its ports, its probes.
 */

export const ROOT = path.resolve(__dirname, '../../..');
export const rel = (file: string) => path.relative(ROOT, file);

// Parsed YAML is untyped data; the checks read it defensively.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Yaml = any;

/** Folders under services/: the deployable services. */
export function serviceFolders(): string[] {
  return fs.readdirSync(path.join(ROOT, 'services'), { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(ROOT, 'services', e.name, 'package.json')))
    .map((e) => e.name)
    .sort();
}

// ---------------------------------------------------------------------------------------------------------
// docker-compose.yml

export interface ComposeService {
  name: string;
  raw: Yaml;
  env: Record<string, string>;
  /** Variables whose interpolation compose could not do without the caller's environment. */
  envProblems: string[];
  /** Ports the container listens on as declared: `expose` and the container side of `ports`. */
  containerPorts: number[];
  /** Container ports published on the host. */
  published: number[];
}

/** `${VAR:-default}` / `${VAR-default}` take their default (the check must not depend on the caller's shell); `$$` is `$`. */
export function interpolate(value: string, problems: string[], where: string): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*)|(:?\?)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, braced: string | undefined, dash: string | undefined, fallback: string | undefined, req: string | undefined, _msg, bare: string | undefined) => {
      if (whole === '$$') return '$';
      if (dash !== undefined) return fallback ?? '';
      problems.push(`${where}: \${${braced ?? bare}${req ?? ''}} has no default, so the stack depends on the caller's environment`);
      return '';
    });
}

function composeEnv(raw: Yaml, where: string, problems: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  const source = raw?.environment;
  if (Array.isArray(source)) {
    for (const item of source) {
      const text = String(item);
      const eq = text.indexOf('=');
      if (eq < 0) problems.push(`${where}: "${text}" takes its value from the caller's environment`);
      else env[text.slice(0, eq)] = interpolate(text.slice(eq + 1), problems, `${where} ${text.slice(0, eq)}`);
    }
  } else if (source && typeof source === 'object') {
    for (const [k, v] of Object.entries(source)) {
      if (v === null || v === undefined) problems.push(`${where}: ${k} takes its value from the caller's environment`);
      else env[k] = interpolate(String(v), problems, `${where} ${k}`);
    }
  }
  if (raw?.env_file) problems.push(`${where}: env_file is not checked; set variables under environment`);
  return env;
}

function portNumber(text: string): number {
  return Number(String(text).split('/')[0]);
}

/** Short syntax `[ip:][host:]container[/proto]` or long syntax `{ target, published }`. */
function parsePortEntry(entry: Yaml): { target: number; published: boolean } {
  if (entry && typeof entry === 'object') return { target: Number(entry.target), published: entry.published !== undefined };
  const parts = String(entry).split(':');
  return { target: portNumber(parts[parts.length - 1]), published: parts.length > 1 };
}

export interface Compose {
  file: string;
  raw: Yaml;
  services: Map<string, ComposeService>;
}

export function loadCompose(file = path.join(ROOT, 'docker-compose.yml')): Compose {
  const raw = parse(fs.readFileSync(file, 'utf8'), { merge: true });
  const services = new Map<string, ComposeService>();
  for (const [name, svc] of Object.entries<Yaml>(raw?.services ?? {})) {
    const envProblems: string[] = [];
    const env = composeEnv(svc, `compose service ${name}`, envProblems);
    const ports = ((svc.ports ?? []) as Yaml[]).map(parsePortEntry);
    const expose = ((svc.expose ?? []) as Yaml[]).map((p) => portNumber(String(p)));
    services.set(name, {
      name,
      raw: svc,
      env,
      envProblems,
      containerPorts: [...new Set([...expose, ...ports.map((p) => p.target)])].sort((a, b) => a - b),
      published: ports.filter((p) => p.published).map((p) => p.target),
    });
  }
  return { file, raw, services };
}

/** The port and path of the first `http://127.0.0.1:<port>/<path>` (or localhost) a healthcheck calls. */
export function healthcheckTarget(test: Yaml): { port: number; path: string } | null {
  const text = Array.isArray(test) ? test.join(' ') : String(test ?? '');
  const m = /https?:\/\/(?:127\.0\.0\.1|localhost):(\d+)(\/[^'"\s)]*)/.exec(text);
  return m ? { port: Number(m[1]), path: m[2] } : null;
}

// ---------------------------------------------------------------------------------------------------------
// Kubernetes objects (the Helm chart, rendered: see chart.ts)

export interface K8sObject {
  /** The chart template it was rendered from (helm's `# Source:` line). */
  file: string;
  doc: Yaml;
}

export interface Cluster {
  objects: K8sObject[];
  /** ConfigMaps and Secrets by name, as a container would read them. */
  configMaps: Map<string, Record<string, string>>;
  secrets: Map<string, Record<string, string>>;
  /** ConfigMap keys whose content is a file of the chart (ConfigMap name -> key -> file). */
  generatedFiles: Map<string, Record<string, string>>;
  of(kind: string): K8sObject[];
}

/** The objects of a rendering, with the ConfigMaps' keys traced back to the chart's files/ they carry. */
export function clusterOf(objects: K8sObject[], chartFilesDir: string): Cluster {
  const configMaps = new Map<string, Record<string, string>>();
  const secrets = new Map<string, Record<string, string>>();
  const generatedFiles = new Map<string, Record<string, string>>();
  for (const { doc } of objects) {
    const name = doc.metadata?.name;
    if (doc.kind === 'ConfigMap') {
      const data = Object.fromEntries(Object.entries(doc.data ?? {}).map(([k, v]) => [k, String(v)]));
      configMaps.set(name, data);
      const files: Record<string, string> = {};
      for (const [key, value] of Object.entries(data)) {
        const file = path.join(chartFilesDir, key);
        if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() === value.trim()) files[key] = file;
      }
      generatedFiles.set(name, files);
    }
    if (doc.kind === 'Secret') {
      const data: Record<string, string> = {};
      for (const [k, v] of Object.entries(doc.data ?? {})) data[k] = Buffer.from(String(v), 'base64').toString('utf8');
      for (const [k, v] of Object.entries(doc.stringData ?? {})) data[k] = String(v);
      secrets.set(name, data);
    }
  }
  return { objects, configMaps, secrets, generatedFiles, of: (kind) => objects.filter((o) => o.doc.kind === kind) };
}

export interface EnvVar {
  name: string;
  /** The value the container sees; undefined when it cannot be resolved from these files. */
  value: string | undefined;
  /** Where it comes from: `value`, `configMap <name>`, `secret <name>`, or `fieldRef`/`resourceFieldRef`. */
  source: string;
  fromSecret: boolean;
}

/** The container's environment as Kubernetes assembles it: envFrom first, then env (which wins). */
export function containerEnv(cluster: Cluster, container: Yaml, where: string, problems: string[]): Map<string, EnvVar> {
  const env = new Map<string, EnvVar>();
  for (const from of (container.envFrom ?? []) as Yaml[]) {
    const prefix = String(from.prefix ?? '');
    const ref = from.configMapRef ?? from.secretRef;
    const isSecret = Boolean(from.secretRef);
    const store = isSecret ? cluster.secrets : cluster.configMaps;
    const data = store.get(ref?.name);
    if (!data) {
      if (!ref?.optional) problems.push(`${where}: envFrom ${isSecret ? 'Secret' : 'ConfigMap'} ${ref?.name} is not in the rendered chart`);
      continue;
    }
    for (const [k, v] of Object.entries(data)) {
      env.set(prefix + k, { name: prefix + k, value: v, source: `${isSecret ? 'Secret' : 'ConfigMap'} ${ref.name}`, fromSecret: isSecret });
    }
  }
  for (const e of (container.env ?? []) as Yaml[]) {
    if (e.value !== undefined) {
      env.set(e.name, { name: e.name, value: String(e.value), source: 'value', fromSecret: false });
      continue;
    }
    const cmRef = e.valueFrom?.configMapKeyRef;
    const secRef = e.valueFrom?.secretKeyRef;
    if (cmRef || secRef) {
      const ref = cmRef ?? secRef;
      const kind = secRef ? 'Secret' : 'ConfigMap';
      const data = (secRef ? cluster.secrets : cluster.configMaps).get(ref.name);
      const value = data?.[ref.key];
      if (value === undefined && !ref.optional) problems.push(`${where}: ${e.name} reads key "${ref.key}" of ${kind} ${ref.name}, which is not in the rendered chart`);
      env.set(e.name, { name: e.name, value, source: `${kind} ${ref.name}`, fromSecret: Boolean(secRef) });
      continue;
    }
    env.set(e.name, { name: e.name, value: undefined, source: Object.keys(e.valueFrom ?? {})[0] ?? 'unset', fromSecret: false });
  }
  return env;
}

export interface Workload {
  name: string;
  file: string;
  deployment: Yaml;
  pod: Yaml;
  container: Yaml;
  podLabels: Record<string, string>;
}

export function workloads(cluster: Cluster): Map<string, Workload> {
  const out = new Map<string, Workload>();
  for (const { file, doc } of cluster.of('Deployment')) {
    const name = doc.metadata?.name;
    const pod = doc.spec?.template?.spec ?? {};
    const containers = (pod.containers ?? []) as Yaml[];
    out.set(name, {
      name,
      file,
      deployment: doc,
      pod,
      container: containers.find((c) => c.name === name) ?? containers[0] ?? {},
      podLabels: doc.spec?.template?.metadata?.labels ?? {},
    });
  }
  return out;
}

/** A probe or Service port: a number, or the name of one of the container's ports. */
export function resolveContainerPort(container: Yaml, port: Yaml): number | undefined {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^\d+$/.test(port)) return Number(port);
  const named = ((container.ports ?? []) as Yaml[]).find((p) => p.name === port);
  return named ? Number(named.containerPort) : undefined;
}

export const matchesLabels = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

// ---------------------------------------------------------------------------------------------------------
// Dockerfiles

export interface Dockerfile {
  file: string;
  /** Instructions of the last stage (the image that runs), continuation lines joined. */
  finalStage: { instruction: string; args: string }[];
}

export function loadDockerfile(file: string): Dockerfile {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const instructions: { instruction: string; args: string }[] = [];
  let pending = '';
  for (const line of lines) {
    const trimmed = line.trim();
    if (!pending && (trimmed === '' || trimmed.startsWith('#'))) continue;
    if (trimmed.startsWith('#')) continue;
    pending += `${trimmed.replace(/\\$/, '')} `;
    if (trimmed.endsWith('\\')) continue;
    const m = /^(\S+)\s*(.*)$/.exec(pending.trim());
    if (m) instructions.push({ instruction: m[1].toUpperCase(), args: m[2].trim() });
    pending = '';
  }
  const lastFrom = instructions.map((i) => i.instruction).lastIndexOf('FROM');
  return { file, finalStage: instructions.slice(lastFrom) };
}

/** A Service without a selector selects no pods (unlike a NetworkPolicy's empty podSelector, which selects all). */
export const serviceSelects = (service: Yaml, labels: Record<string, string>) =>
  Object.keys(service?.spec?.selector ?? {}).length > 0 && matchesLabels(service.spec.selector, labels);
