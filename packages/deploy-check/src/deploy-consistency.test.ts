import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { catalogSchema } from '@gw/catalog';
import { engineConfig } from '@gw/platform';
import { billingConfigSchema } from '@gw/billing/src/config';
import { edgeConfigSchema } from '@gw/edge/src/config';
import { inferenceConfigSchema } from '@gw/inference/src/config';
import { keysConfigSchema } from '@gw/keys/src/config';
import { mediaConfigSchema } from '@gw/media/src/config';
import {
  containerEnv, healthcheckTarget, loadCluster, loadCompose, loadDockerfile, matchesLabels, rel, serviceSelects,
  resolveContainerPort, ROOT, serviceFolders, workloads, type EnvVar, type Workload, type Yaml,
} from './manifests';

/**
 * The deployment artefacts (docker-compose.yml, deploy/, services/<name>/Dockerfile) must agree with the code:
 * every variable they set is one the service reads, ports and probes are where the service listens, addresses
 * point at a service and port that exist, and each environment passes the service's own config schema.
 * Every check collects what disagrees as sentences and expects that list to be empty.
 */

interface EnvSchema {
  shape: Record<string, unknown>;
  safeParse(input: unknown): { success: boolean; data?: unknown; error?: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };
}

interface ServiceSpec {
  schema: EnvSchema;
  /** The port whose /readyz and /livez the probes use (edge: the admin port). */
  probePort: string;
  /** Where keys/billing answer grpc.health.v1 (the Kubernetes readiness probe). */
  grpcPort?: string;
  /** The one port published to the outside world. */
  publicPort?: string;
}

const SERVICES: Record<string, ServiceSpec> = {
  edge: { schema: edgeConfigSchema, probePort: 'EDGE_ADMIN_PORT', publicPort: 'EDGE_PORT' },
  inference: { schema: inferenceConfigSchema, probePort: 'INFERENCE_HTTP_PORT' },
  keys: { schema: keysConfigSchema, probePort: 'KEYS_HTTP_PORT', grpcPort: 'KEYS_GRPC_PORT' },
  billing: { schema: billingConfigSchema, probePort: 'BILLING_HTTP_PORT', grpcPort: 'BILLING_GRPC_PORT' },
  media: { schema: mediaConfigSchema, probePort: 'MEDIA_HTTP_PORT' },
};

/** Every folder under services/; KNOWN are those with a SERVICES entry (the inventory reports the others). */
const NAMES = serviceFolders();
const KNOWN = NAMES.filter((n) => n in SERVICES);
const compose = loadCompose();
const cluster = loadCluster();
const deployments = workloads(cluster);
const repoCatalog = JSON.parse(fs.readFileSync(path.join(ROOT, 'config/catalog.json'), 'utf8'));
const deployCatalogFile = path.join(ROOT, 'deploy/catalog.json');

/** Provider credentials: the variables config/catalog.json names (api_key_env, requires_env). */
const PROVIDER_ENV = new Set<string>(
  Object.values<Yaml>(repoCatalog.providers).flatMap((p) => [p.api_key_env, p.requires_env]).filter(Boolean),
);

const spec = (name: string): ServiceSpec => {
  const s = SERVICES[name];
  if (!s) throw new Error(`services/${name} has no entry in SERVICES of ${rel(__filename)}: add its config schema and probe port`);
  return s;
};
const schemaKeys = (name: string) => Object.keys(spec(name).schema.shape);
const portVars = (name: string) => schemaKeys(name).filter((k) => k.endsWith('_PORT'));

/**
 * Addresses a service calls only for some requests, so it starts without them: billing asks keys only about a
 * gRPC caller's API key (and keys depends on billing, so billing cannot wait for keys).
 */
const CALLED_ONLY_ON_DEMAND = new Set(['billing KEYS_GRPC_ADDR']);

type Parsed = { ok: true; data: Record<string, unknown> } | { ok: false; problems: string[] };
function parseEnv(name: string, env: Record<string, string>): Parsed {
  const r = spec(name).schema.safeParse(env);
  if (r.success) return { ok: true, data: r.data as Record<string, unknown> };
  return { ok: false, problems: (r.error?.issues ?? []).map((i) => `${i.path.map(String).join('.') || '(env)'}: ${i.message}`) };
}

/** Where the service listens: each port variable as set in `env`, else its default (NaN when invalid). */
function effectivePorts(name: string, env: Record<string, string>): Record<string, number> {
  return Object.fromEntries(portVars(name).map((k) => {
    // The port's own field only: the other variables (a required secret among them) are checked elsewhere.
    const parsed = (spec(name).schema.shape[k] as Pick<EnvSchema, 'safeParse'>).safeParse(env[k]);
    return [k, parsed.success ? Number(parsed.data) : Number.NaN];
  }));
}

const composeEnv = (name: string) => compose.services.get(name)?.env ?? {};
function k8sEnv(name: string, problems: string[] = []): Map<string, EnvVar> {
  const w = deployments.get(name);
  return w ? containerEnv(cluster, w.container, `Deployment ${name} (${rel(w.file)})`, problems) : new Map();
}
const k8sEnvValues = (name: string) =>
  Object.fromEntries([...k8sEnv(name)].filter(([, v]) => v.value !== undefined).map(([k, v]) => [k, v.value as string]));

type Source = 'compose' | 'k8s';
const SOURCES: Source[] = ['compose', 'k8s'];
const envOf = (source: Source, name: string) => (source === 'compose' ? composeEnv(name) : k8sEnvValues(name));
const where = (source: Source, name: string) =>
  source === 'compose' ? `docker-compose.yml service ${name}` : `Deployment ${name} (${rel(deployments.get(name)?.file ?? 'deploy/')})`;
const grid = KNOWN.flatMap((name) => SOURCES.map((source) => [source, name] as [Source, string]));

const sorted = (xs: Iterable<number>) => [...new Set(xs)].sort((a, b) => a - b);

describe('inventory', () => {
  test('every service has a SERVICES entry here, and every entry a folder', () => {
    const problems = [
      ...NAMES.filter((n) => !SERVICES[n]).map((n) => `services/${n} has no entry in SERVICES (its schema and probe port)`),
      ...Object.keys(SERVICES).filter((n) => !NAMES.includes(n)).map((n) => `SERVICES names ${n}, but services/${n} does not exist`),
    ];
    expect(problems).toEqual([]);
  });

  test.each(NAMES)('%s has a compose service, a Deployment, a Service and a Dockerfile', (name) => {
    const problems: string[] = [];
    if (!compose.services.has(name)) problems.push(`docker-compose.yml has no service "${name}"`);
    if (!deployments.has(name)) problems.push(`deploy/ has no Deployment named "${name}"`);
    const w = deployments.get(name);
    if (w && !cluster.of('Service').some((s) => serviceSelects(s.doc, w.podLabels))) {
      problems.push(`deploy/ has no Service selecting the pods of Deployment ${name}`);
    }
    if (!fs.existsSync(path.join(ROOT, 'services', name, 'Dockerfile'))) problems.push(`services/${name}/Dockerfile is missing`);
    expect(problems).toEqual([]);
  });

  test('kustomization.yaml lists every YAML file under deploy/, and each file it lists exists', () => {
    const problems: string[] = [];
    const k = cluster.kustomization;
    if (!k) problems.push('deploy/kustomization.yaml is missing');
    const listed = new Set<string>(((k?.resources ?? []) as string[]).map((r) => path.join(cluster.dir, r)));
    for (const f of cluster.files) {
      if (path.basename(f).startsWith('kustomization.')) continue;
      if (!listed.has(f)) problems.push(`${rel(f)} is not in kustomization.yaml resources, so kubectl apply -k would skip it`);
    }
    for (const f of listed) if (!fs.existsSync(f)) problems.push(`kustomization.yaml lists ${rel(f)}, which does not exist`);
    for (const [gen, files] of cluster.generatedFiles) {
      for (const f of Object.values(files)) if (!fs.existsSync(f)) problems.push(`configMapGenerator ${gen} reads ${rel(f)}, which does not exist`);
    }
    expect(problems).toEqual([]);
  });
});

describe('environment variables are ones the service reads', () => {
  test.each(grid)('%s: %s', (source, name) => {
    const allowed = new Set([...schemaKeys(name), ...PROVIDER_ENV]);
    const problems: string[] = [];
    const vars = source === 'compose'
      ? Object.keys(composeEnv(name)).map((k) => [k, 'environment'] as const)
      : [...k8sEnv(name, problems).values()].map((v) => [v.name, v.source] as const);
    for (const [k, from] of vars) {
      if (!allowed.has(k)) {
        problems.push(`${where(source, name)} sets ${k} (from ${from}), which is neither a key of ${name}'s config schema nor a provider credential named in config/catalog.json`);
      }
    }
    if (source === 'compose') problems.push(...(compose.services.get(name)?.envProblems ?? []));
    expect(problems).toEqual([]);
  });
});

describe("each environment passes the service's own config schema", () => {
  test.each(grid)('%s: %s', (source, name) => {
    const env = envOf(source, name);
    const parsed = parseEnv(name, env);
    const problems = parsed.ok ? [] : parsed.problems.map((p) => `${where(source, name)}: ${p}`);
    if (parsed.ok) {
      try {
        engineConfig(parsed.data as Parameters<typeof engineConfig>[0], name);
      } catch (err) {
        problems.push(`${where(source, name)}: ${(err as Error).message}`);
      }
      if (parsed.data.STORE !== 'mongo' || parsed.data.BUS !== 'kafka') {
        problems.push(`${where(source, name)} runs STORE=${String(parsed.data.STORE)} BUS=${String(parsed.data.BUS)}; a deployment with one service per container needs STORE=mongo and BUS=kafka`);
      }
    }
    if (source === 'k8s') {
      for (const v of k8sEnv(name).values()) {
        if (v.value === undefined && v.fromSecret) continue;
        if (v.value === undefined) problems.push(`${where(source, name)}: ${v.name} comes from ${v.source}, which this check cannot resolve`);
      }
    }
    expect(problems).toEqual([]);
  });

  test.each(SOURCES)('%s: every seeded account exists in both keys and billing', (source) => {
    const ids = (name: string) => {
      const parsed = parseEnv(name, envOf(source, name));
      return parsed.ok ? ((parsed.data.SEED_ACCOUNTS as { id: string }[]) ?? []).map((a) => a.id) : null;
    };
    const [keys, billing] = [ids('keys'), ids('billing')];
    if (!keys || !billing) return; // an invalid environment is reported by the schema test above
    const problems = [
      ...keys.filter((id) => !billing.includes(id)).map((id) => `${where(source, 'keys')} seeds account ${id} (SEED_ACCOUNTS), which ${where(source, 'billing')} does not`),
      ...billing.filter((id) => !keys.includes(id)).map((id) => `${where(source, 'billing')} seeds account ${id} (SEED_ACCOUNTS), which ${where(source, 'keys')} does not (no management key for it)`),
    ];
    expect(problems).toEqual([]);
  });
});

describe('secrets stay in Secrets', () => {
  test.each(KNOWN)('Deployment %s: provider credentials, MONGO_URL and the identity secret come from a Secret', (name) => {
    const problems = [...k8sEnv(name).values()]
      .filter((v) => (PROVIDER_ENV.has(v.name) || v.name === 'MONGO_URL' || v.name === 'GATEWAY_IDENTITY_SECRET') && !v.fromSecret)
      .map((v) => `${where('k8s', name)}: ${v.name} comes from ${v.source}; it must come from a Secret`);
    expect(problems).toEqual([]);
  });
});

describe('ports and probes match the port variables', () => {
  test.each(KNOWN)('compose: %s', (name) => {
    const svc = compose.services.get(name);
    if (!svc) return; // reported by the inventory
    const ports = effectivePorts(name, svc.env);
    const problems: string[] = [];
    const declared = sorted(svc.containerPorts);
    const expected = sorted(Object.values(ports));
    if (!isDeepStrictEqual(declared, expected)) {
      problems.push(`docker-compose.yml service ${name} declares container ports [${declared}] (expose + ports), but the service listens on [${expected}] (${Object.entries(ports).map(([k, v]) => `${k}=${v}`).join(', ')})`);
    }
    const pub = spec(name).publicPort;
    const publishedExpected = pub ? [ports[pub]] : [];
    if (!isDeepStrictEqual(sorted(svc.published), publishedExpected)) {
      problems.push(`docker-compose.yml service ${name} publishes container ports [${sorted(svc.published)}]; expected [${publishedExpected}]${pub ? ` (${pub})` : ' (only the edge is published)'}`);
    }
    const hc = healthcheckTarget(svc.raw.healthcheck?.test);
    const probe = spec(name).probePort;
    if (!hc) problems.push(`docker-compose.yml service ${name} has no healthcheck calling http://127.0.0.1:<port>/readyz`);
    else if (hc.port !== ports[probe] || hc.path !== '/readyz') {
      problems.push(`docker-compose.yml service ${name} healthcheck calls :${hc.port}${hc.path}, but readiness is :${ports[probe]}/readyz (${probe})`);
    }
    expect(problems).toEqual([]);
  });

  test('compose: no other service publishes a port', () => {
    const problems = [...compose.services.values()]
      .filter((s) => s.published.length > 0 && !(s.name in SERVICES && spec(s.name).publicPort))
      .map((s) => `docker-compose.yml service ${s.name} publishes [${s.published}]; only the edge may be reachable from outside`);
    expect(problems).toEqual([]);
  });

  test.each(KNOWN)('Deployment: %s', (name) => {
    const w = deployments.get(name);
    if (!w) return;
    const ports = effectivePorts(name, k8sEnvValues(name));
    const s = spec(name);
    const c = w.container;
    const problems: string[] = [];
    const at = where('k8s', name);
    const declared = sorted(((c.ports ?? []) as Yaml[]).map((p) => Number(p.containerPort)));
    const expected = sorted(Object.values(ports));
    if (!isDeepStrictEqual(declared, expected)) {
      problems.push(`${at} declares containerPorts [${declared}], but the service listens on [${expected}] (${Object.entries(ports).map(([k, v]) => `${k}=${v}`).join(', ')})`);
    }
    const probeAt = (kind: string, probe: Yaml, wantPath: string, wantVar: string) => {
      if (!probe?.httpGet) return problems.push(`${at} ${kind} is not an HTTP GET of ${wantPath} on ${wantVar}`);
      const port = resolveContainerPort(c, probe.httpGet.port);
      if (port !== ports[wantVar] || probe.httpGet.path !== wantPath) {
        problems.push(`${at} ${kind} calls ${probe.httpGet.path} on port ${String(probe.httpGet.port)} (= ${port}), but the service answers ${wantPath} on ${ports[wantVar]} (${wantVar})`);
      }
      return undefined;
    };
    if (s.grpcPort) {
      const rp = c.readinessProbe;
      if (!rp?.grpc) problems.push(`${at} readinessProbe is not a gRPC probe on ${s.grpcPort} (${ports[s.grpcPort]}), where grpc.health.v1 answers`);
      else if (Number(rp.grpc.port) !== ports[s.grpcPort]) {
        problems.push(`${at} gRPC readinessProbe uses port ${rp.grpc.port}, but grpc.health.v1 is served on ${ports[s.grpcPort]} (${s.grpcPort})`);
      }
    } else {
      probeAt('readinessProbe', c.readinessProbe, '/readyz', s.probePort);
    }
    probeAt('livenessProbe', c.livenessProbe, '/livez', s.probePort);
    if (c.startupProbe?.httpGet) probeAt('startupProbe', c.startupProbe, c.startupProbe.httpGet.path === '/readyz' ? '/readyz' : '/livez', s.probePort);
    expect(problems).toEqual([]);
  });

  test.each(KNOWN)('Service ports of %s lead to container ports', (name) => {
    const w = deployments.get(name);
    if (!w) return;
    const containerPorts = new Set(((w.container.ports ?? []) as Yaml[]).map((p) => Number(p.containerPort)));
    const problems: string[] = [];
    for (const { file, doc } of cluster.of('Service').filter((s) => serviceSelects(s.doc, w.podLabels))) {
      for (const p of (doc.spec?.ports ?? []) as Yaml[]) {
        const target = resolveContainerPort(w.container, p.targetPort ?? p.port);
        if (target === undefined || !containerPorts.has(target)) {
          problems.push(`Service ${doc.metadata?.name} (${rel(file)}) port ${p.port} targets ${String(p.targetPort ?? p.port)}, which is no container port of Deployment ${name} [${[...containerPorts]}]`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test.each(KNOWN)('Dockerfile: %s', (name) => {
    const file = path.join(ROOT, 'services', name, 'Dockerfile');
    if (!fs.existsSync(file)) return;
    const df = loadDockerfile(file);
    const defaults = effectivePorts(name, {});
    const s = spec(name);
    const problems: string[] = [];
    const exposed = sorted(df.finalStage.filter((i) => i.instruction === 'EXPOSE').flatMap((i) => i.args.split(/\s+/).map((p) => Number(p.split('/')[0]))));
    if (!isDeepStrictEqual(exposed, sorted(Object.values(defaults)))) {
      problems.push(`services/${name}/Dockerfile EXPOSEs [${exposed}], but the defaults are [${sorted(Object.values(defaults))}] (${Object.entries(defaults).map(([k, v]) => `${k}=${v}`).join(', ')})`);
    }
    const hc = df.finalStage.find((i) => i.instruction === 'HEALTHCHECK')?.args ?? '';
    if (!hc.includes(`process.env.${s.probePort} || ${defaults[s.probePort]}`) || !hc.includes('/readyz')) {
      problems.push(`services/${name}/Dockerfile HEALTHCHECK must call /readyz on process.env.${s.probePort} || ${defaults[s.probePort]}; it is: ${hc || '(none)'}`);
    }
    const cmd = df.finalStage.filter((i) => i.instruction === 'CMD').pop()?.args ?? '';
    let argv: string[] = [];
    try {
      argv = JSON.parse(cmd);
    } catch {
      problems.push(`services/${name}/Dockerfile CMD is not in exec (JSON) form: ${cmd}`);
    }
    const entry = `services/${name}/src/main.ts`;
    if (argv.length && !isDeepStrictEqual(argv, ['node', '--import', 'tsx', entry])) {
      problems.push(`services/${name}/Dockerfile CMD is ${cmd}; expected ["node","--import","tsx","${entry}"]`);
    }
    if (!fs.existsSync(path.join(ROOT, entry))) problems.push(`${entry}, the image's entry point, does not exist`);
    const user = df.finalStage.filter((i) => i.instruction === 'USER').pop()?.args;
    if (!user || /^(0|root)(:|$)/.test(user)) problems.push(`services/${name}/Dockerfile runs as ${user ?? 'root (no USER)'}; it must be a non-root user`);
    expect(problems).toEqual([]);
  });
});

describe('addresses point at a service and port that exist', () => {
  const ADDRESS = /^([A-Z]+)_(GRPC|HTTP)_(ADDR|URL)$/;

  function hostPort(value: string): { scheme?: string; host: string; port: number } | null {
    const m = /^(?:([a-z]+):\/\/)?([^/:]+):(\d+)(?:\/.*)?$/.exec(value.trim());
    return m ? { scheme: m[1], host: m[2], port: Number(m[3]) } : null;
  }

  /** Where an address variable must lead: KEYS_GRPC_ADDR -> keys on KEYS_GRPC_PORT. */
  function target(variable: string): { service: string; portVar: string } | null {
    const m = ADDRESS.exec(variable);
    return m ? { service: m[1].toLowerCase(), portVar: `${m[1]}_${m[2]}_PORT` } : null;
  }

  test.each(grid)('%s: %s', (source, name) => {
    const env = envOf(source, name);
    const problems: string[] = [];
    for (const [variable, value] of Object.entries(env)) {
      const t = target(variable);
      if (!t) continue;
      const hp = hostPort(value);
      const at = `${where(source, name)} ${variable}=${value}`;
      if (!hp) {
        problems.push(`${at} is not host:port`);
        continue;
      }
      if (variable.endsWith('_URL') && hp.scheme !== 'http') problems.push(`${at} must be an http:// URL`);
      if (variable.endsWith('_ADDR') && hp.scheme) problems.push(`${at} must be host:port without a scheme`);
      if (!(t.service in SERVICES)) {
        problems.push(`${at}: no service "${t.service}" exists under services/`);
        continue;
      }
      const wantPort = effectivePorts(t.service, envOf(source, t.service))[t.portVar];
      if (source === 'compose') {
        if (hp.host !== t.service || !compose.services.has(hp.host)) {
          problems.push(`${at} points at host "${hp.host}", but ${t.service} runs as compose service "${t.service}"${compose.services.has(t.service) ? '' : ' (missing)'}`);
        }
        if (hp.port !== wantPort) problems.push(`${at} uses port ${hp.port}, but ${t.service} listens on ${wantPort} (${t.portVar})`);
        const dep = compose.services.get(name)?.raw.depends_on?.[t.service];
        if (dep?.condition !== 'service_healthy' && !CALLED_ONLY_ON_DEMAND.has(`${name} ${variable}`)) problems.push(`docker-compose.yml service ${name} calls ${t.service} (${variable}) but does not depend on it with condition service_healthy`);
      } else {
        problems.push(...k8sAddressProblems(at, hp.host, hp.port, t.service, wantPort, t.portVar));
      }
    }
    expect(problems).toEqual([]);
  });

  /** host must name a Service (short or namespaced DNS name) with that port, which leads to the expected container port. */
  function k8sAddressProblems(at: string, host: string, port: number, service: string, wantPort: number, portVar: string): string[] {
    const svcName = host.split('.')[0];
    const svc = cluster.of('Service').find((s) => s.doc.metadata?.name === svcName);
    if (!svc) return [`${at}: no Service named "${svcName}" under deploy/`];
    const sp = ((svc.doc.spec?.ports ?? []) as Yaml[]).find((p) => Number(p.port) === port);
    if (!sp) return [`${at}: Service ${svcName} has no port ${port} (it has [${((svc.doc.spec?.ports ?? []) as Yaml[]).map((p) => p.port)}])`];
    const w = deployments.get(service);
    if (!w) return [`${at}: no Deployment ${service}`];
    if (!serviceSelects(svc.doc, w.podLabels)) return [`${at}: Service ${svcName} does not select the pods of Deployment ${service}`];
    const container = resolveContainerPort(w.container, sp.targetPort ?? sp.port);
    return container === wantPort ? [] : [`${at}: Service ${svcName} port ${port} leads to container port ${container}, but ${service} listens on ${wantPort} (${portVar})`];
  }

  test('compose: MONGO_URL and KAFKA_BROKERS name compose services', () => {
    const problems: string[] = [];
    for (const name of NAMES) {
      const env = composeEnv(name);
      const hosts = [
        ...(env.MONGO_URL ? [/^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]+)/.exec(env.MONGO_URL)?.[1] ?? ''] : []),
        ...(env.KAFKA_BROKERS ? env.KAFKA_BROKERS.split(',') : []),
      ].flatMap((h) => h.split(',')).map((h) => h.trim().split(':')[0]);
      for (const h of hosts) {
        if (!compose.services.has(h)) problems.push(`docker-compose.yml service ${name} connects to "${h}", which is no compose service`);
        else if (compose.services.get(name)?.raw.depends_on?.[h]?.condition !== 'service_healthy') {
          problems.push(`docker-compose.yml service ${name} connects to ${h} but does not depend on it with condition service_healthy`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test('every depends_on with condition service_healthy names a service with a healthcheck', () => {
    const problems: string[] = [];
    for (const svc of compose.services.values()) {
      for (const [dep, cond] of Object.entries<Yaml>(svc.raw.depends_on ?? {})) {
        if (!compose.services.has(dep)) problems.push(`docker-compose.yml service ${svc.name} depends on unknown service ${dep}`);
        else if (cond?.condition === 'service_healthy' && !compose.services.get(dep)?.raw.healthcheck) {
          problems.push(`docker-compose.yml service ${svc.name} waits for ${dep} to be healthy, but ${dep} has no healthcheck`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('the catalogue', () => {
  const deployCatalog = JSON.parse(fs.readFileSync(deployCatalogFile, 'utf8'));
  const withoutUrls = (c: Yaml) => ({
    ...c,
    providers: Object.fromEntries(Object.entries<Yaml>(c.providers).map(([k, p]) => [k, { ...p, base_url: undefined }])),
  });

  test('deploy/catalog.json is config/catalog.json with deployment addresses (same models, prices and providers)', () => {
    const parsed = catalogSchema.safeParse(deployCatalog);
    expect(parsed.success ? [] : parsed.error.issues.map((i) => `deploy/catalog.json ${i.path.join('.')}: ${i.message}`)).toEqual([]);
    expect(differences(withoutUrls(repoCatalog), withoutUrls(deployCatalog), '')
      .map((d) => `deploy/catalog.json ${d}; it must equal config/catalog.json except for provider base_url`)).toEqual([]);
  });

  function differences(want: Yaml, got: Yaml, at: string): string[] {
    if (isDeepStrictEqual(want, got)) return [];
    if (want && got && typeof want === 'object' && typeof got === 'object' && Array.isArray(want) === Array.isArray(got)) {
      const keys = [...new Set([...Object.keys(want), ...Object.keys(got)])];
      return keys.flatMap((k) => differences(want[k], got[k], at ? `${at}.${k}` : k));
    }
    return [`${at || '(root)'} is ${JSON.stringify(got)} where config/catalog.json has ${JSON.stringify(want)}`];
  }

  test.each(SOURCES)('%s: provider base URLs inside the deployment lead to a running service', (source) => {
    const problems: string[] = [];
    for (const [id, p] of Object.entries<Yaml>(deployCatalog.providers)) {
      const u = new URL(p.base_url);
      if (u.protocol === 'local:') continue; // an engine inside the calling service's own container (espeak-ng)
      if (u.hostname.includes('.') || u.hostname === 'localhost') {
        if (/^(127\.|localhost$)/.test(u.hostname)) problems.push(`deploy/catalog.json provider ${id} uses ${p.base_url}: loopback is the inference container itself`);
        continue; // a public endpoint
      }
      const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
      if (source === 'compose') {
        const svc = compose.services.get(u.hostname);
        if (!svc) problems.push(`deploy/catalog.json provider ${id} calls ${p.base_url}, but compose has no service "${u.hostname}"`);
        else if (!svc.containerPorts.includes(port)) problems.push(`deploy/catalog.json provider ${id} calls port ${port}, but compose service ${u.hostname} declares [${svc.containerPorts}]`);
      } else {
        const svc = cluster.of('Service').find((s) => s.doc.metadata?.name === u.hostname);
        const sp = ((svc?.doc.spec?.ports ?? []) as Yaml[]).find((x) => Number(x.port) === port);
        const w = [...deployments.values()].find((d) => svc && serviceSelects(svc.doc, d.podLabels));
        const target = sp && w ? resolveContainerPort(w.container, sp.targetPort ?? sp.port) : undefined;
        const listening = ((w?.container.ports ?? []) as Yaml[]).map((x) => Number(x.containerPort));
        if (!svc || !sp || target === undefined || !listening.includes(target)) {
          problems.push(`deploy/catalog.json provider ${id} calls ${p.base_url}, but no Service "${u.hostname}" with port ${port} leads to a container port`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test.each(grid.filter(([, name]) => schemaKeys(name).includes('CATALOG_FILE')))('%s: %s reads deploy/catalog.json', (source, name) => {
    const file = envOf(source, name).CATALOG_FILE;
    const at = where(source, name);
    const problems: string[] = [];
    if (!file) {
      problems.push(`${at} does not set CATALOG_FILE, so it would read the image's config/catalog.json (loopback simulator address)`);
    } else if (source === 'compose') {
      const mounts = ((compose.services.get(name)?.raw.volumes ?? []) as Yaml[]).map((v) => {
        if (typeof v === 'object') return { src: String(v.source), dst: String(v.target) };
        const [src, dst] = String(v).split(':');
        return { src, dst };
      });
      const m = mounts.find((x) => x.dst === file);
      if (!m) problems.push(`${at} sets CATALOG_FILE=${file}, but nothing is mounted there`);
      else if (path.resolve(ROOT, m.src) !== deployCatalogFile) problems.push(`${at} mounts ${m.src} at ${file}; expected ./deploy/catalog.json`);
    } else {
      const w = deployments.get(name)!;
      const mount = ((w.container.volumeMounts ?? []) as Yaml[]).find((m) => file.startsWith(`${String(m.mountPath).replace(/\/$/, '')}/`));
      const volume = mount && ((w.pod.volumes ?? []) as Yaml[]).find((v) => v.name === mount.name);
      const cm = volume?.configMap?.name;
      const key = mount && path.posix.relative(mount.mountPath, file);
      const generatedFrom = cm && key ? cluster.generatedFiles.get(cm)?.[key] : undefined;
      if (!mount || !cm) problems.push(`${at} sets CATALOG_FILE=${file}, but no ConfigMap volume is mounted there`);
      else if (generatedFrom !== deployCatalogFile) problems.push(`${at} reads key "${key}" of ConfigMap ${cm}, which is not generated from deploy/catalog.json`);
    }
    expect(problems).toEqual([]);
  });
});

describe('network policies', () => {
  const policies = cluster.of('NetworkPolicy').map((p) => p.doc);
  type Peer = 'anywhere' | Yaml;

  /** Who may connect to a pod's port: every peer of every ingress rule that covers it. */
  function peers(w: Workload, port: number): Peer[] {
    const out: Peer[] = [];
    for (const p of policies) {
      if (!matchesLabels(p.spec?.podSelector?.matchLabels, w.podLabels)) continue;
      if (p.spec?.podSelector?.matchExpressions) throw new Error(`NetworkPolicy ${p.metadata?.name}: matchExpressions are not supported by this check`);
      for (const rule of (p.spec?.ingress ?? []) as Yaml[]) {
        const covers = !rule.ports || (rule.ports as Yaml[]).some((rp) => rp.port === undefined || resolveContainerPort(w.container, rp.port) === port);
        if (!covers) continue;
        if (!rule.from || rule.from.length === 0) out.push('anywhere');
        else out.push(...rule.from);
      }
    }
    return out;
  }
  const isPodPeerOf = (peer: Peer, names: string[]) =>
    peer !== 'anywhere' && !peer.namespaceSelector && !peer.ipBlock &&
    names.some((n) => deployments.get(n) && matchesLabels(peer.podSelector?.matchLabels, deployments.get(n)!.podLabels) && Object.keys(peer.podSelector?.matchLabels ?? {}).length > 0);
  const describePeer = (peer: Peer) => (peer === 'anywhere' ? 'anywhere' : JSON.stringify(peer));

  test('ingress is denied by default in the namespace', () => {
    const denyAll = policies.some((p) =>
      Object.keys(p.spec?.podSelector ?? {}).length === 0 && (p.spec?.policyTypes ?? []).includes('Ingress') && (p.spec?.ingress ?? []).length === 0);
    expect(denyAll ? [] : ['deploy/ has no NetworkPolicy with podSelector {} and policyTypes [Ingress] that allows nothing']).toEqual([]);
  });

  test.each([...deployments.keys()])('%s: only the edge public port is open to outside; HTTP ports take traffic from the edge only', (name) => {
    const w = deployments.get(name)!;
    const problems: string[] = [];
    const ports = name in SERVICES ? effectivePorts(name, k8sEnvValues(name)) : {};
    const publicPort = name in SERVICES && spec(name).publicPort ? ports[spec(name).publicPort!] : undefined;
    for (const cp of (w.container.ports ?? []) as Yaml[]) {
      const port = Number(cp.containerPort);
      const from = peers(w, port);
      if (port === publicPort) {
        if (!from.includes('anywhere')) problems.push(`Deployment ${name} public port ${port} is not open to everyone`);
        continue;
      }
      for (const peer of from) {
        if (peer === 'anywhere' || peer.ipBlock || (peer.namespaceSelector && name !== 'edge')) {
          problems.push(`Deployment ${name} port ${port} accepts ${describePeer(peer)}; only the edge's public port may be reachable from outside the gateway`);
        }
      }
      const portVar = Object.entries(ports).find(([, v]) => v === port)?.[0];
      if (name !== 'edge' && portVar?.endsWith('_HTTP_PORT')) {
        if (from.length === 0) problems.push(`Deployment ${name} ${portVar} ${port} accepts no traffic at all; the edge must reach it`);
        for (const peer of from) {
          if (!isPodPeerOf(peer, ['edge'])) problems.push(`Deployment ${name} ${portVar} ${port} accepts ${describePeer(peer)}; x-gw-* identity headers must only come from the edge`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test.each(KNOWN.filter((n) => n !== 'edge'))('%s: every caller named by an address variable may connect', (name) => {
    const problems: string[] = [];
    const w = deployments.get(name);
    if (!w) return;
    for (const caller of KNOWN) {
      for (const [variable] of Object.entries(k8sEnvValues(caller))) {
        const m = /^([A-Z]+)_(GRPC|HTTP)_(ADDR|URL)$/.exec(variable);
        if (!m || m[1].toLowerCase() !== name) continue;
        const port = effectivePorts(name, k8sEnvValues(name))[`${m[1]}_${m[2]}_PORT`];
        if (!peers(w, port).some((p) => p === 'anywhere' || isPodPeerOf(p, [caller]))) {
          problems.push(`${caller} calls ${name} on ${port} (${variable}), but no NetworkPolicy lets ${caller} pods in`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('pods', () => {
  test.each(['edge', 'inference'])('%s is scaled by a HorizontalPodAutoscaler (and sets no replicas of its own)', (name) => {
    const hpa = cluster.of('HorizontalPodAutoscaler').find((h) => h.doc.spec?.scaleTargetRef?.kind === 'Deployment' && h.doc.spec?.scaleTargetRef?.name === name);
    const problems: string[] = [];
    if (!hpa) problems.push(`no HorizontalPodAutoscaler targets Deployment ${name}`);
    if (hpa && deployments.get(name)?.deployment.spec?.replicas !== undefined) {
      problems.push(`Deployment ${name} sets replicas, which every kubectl apply would reset under its HPA`);
    }
    expect(problems).toEqual([]);
  });

  test.each([...deployments.keys()])('%s runs non-root on a read-only root filesystem with resources set', (name) => {
    const w = deployments.get(name)!;
    const c = w.container;
    const problems: string[] = [];
    const at = `Deployment ${name}`;
    const nonRoot = c.securityContext?.runAsNonRoot ?? w.pod.securityContext?.runAsNonRoot;
    const uid = c.securityContext?.runAsUser ?? w.pod.securityContext?.runAsUser;
    if (nonRoot !== true) problems.push(`${at} does not set runAsNonRoot: true`);
    if (uid === 0) problems.push(`${at} runs as uid 0`);
    if (c.securityContext?.readOnlyRootFilesystem !== true) problems.push(`${at} container ${c.name} has a writable root filesystem`);
    if (c.securityContext?.allowPrivilegeEscalation !== false) problems.push(`${at} container ${c.name} does not set allowPrivilegeEscalation: false`);
    if (!(c.securityContext?.capabilities?.drop ?? []).includes('ALL')) problems.push(`${at} container ${c.name} does not drop ALL capabilities`);
    const tmp = ((c.volumeMounts ?? []) as Yaml[]).find((m) => m.mountPath === '/tmp');
    const tmpVolume = tmp && ((w.pod.volumes ?? []) as Yaml[]).find((v) => v.name === tmp.name);
    if (!tmpVolume?.emptyDir) problems.push(`${at} mounts no emptyDir at /tmp (tsx writes its cache there; the root filesystem is read-only)`);
    if (!c.resources?.requests?.cpu || !c.resources?.requests?.memory || !c.resources?.limits?.memory) {
      problems.push(`${at} container ${c.name} must set requests.cpu, requests.memory and limits.memory`);
    }
    expect(problems).toEqual([]);
  });
});
