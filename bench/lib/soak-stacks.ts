/**
 * The gateway under a steady soak, in either mode, as child processes of the benchmark whose pids it samples:
 * - `embedded`: every service in one process on the embedded engines (`gateway-process.ts`);
 * - `processes`: every service as its own process (its image's build) on the real engines
 *   (MONGO_URL, KAFKA_BROKERS), with a database and a bus namespace of its own so it shares the engines
 *   with other users without touching their data.
 * Each is compiled first, as its image builds it. Each child gets an IPC channel, so it stops itself when the
 * benchmark dies (`gateway-process.ts` itself, `exit-with-parent.ts` preloaded into a service).
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { compiledBuild, compiledGateway } from './build';
import { forgetChild, ROOT, startChild, type Child } from './children';
import { SERVICE_PORT_NAMES, serviceAddressEnv, servicePortsFrom } from '@gw/local-stack/src/service-addresses';
import { freePorts, getStatus, HOST, waitFor } from './net';

export type SoakMode = 'embedded' | 'processes';

export interface SoakStack {
  edgeOrigin: string;
  /** The gateway's processes by name (one, `gateway`, in embedded mode). */
  pids: Record<string, number>;
  children: Child[];
  /** What the run used of shared engines (processes mode): database and bus namespace. */
  engines: { mongo_database: string; bus_namespace: string } | null;
}

/** The services of the multi-process mode; the edge last, in front of the others. */
export const SERVICES = ['billing', 'keys', 'inference', 'batch', 'webhooks', 'media', 'console', 'edge'] as const;
const EXIT_WITH_PARENT = 'bench/exit-with-parent.ts';

/** A free port for every service of the stack, and the addresses the services reach each other at. */
export async function servicePorts(): Promise<NodeJS.ProcessEnv> {
  return serviceAddressEnv(servicePortsFrom(await freePorts(SERVICE_PORT_NAMES.length)));
}

/**
 * `env`: what every service gets (seed accounts, catalogue, simulator key, log level, DATA_DIR); `tempDir`: the
 * benchmark's temp dir, where the builds go.
 */
export async function startSoakStack(mode: SoakMode, env: NodeJS.ProcessEnv, tempDir: string): Promise<SoakStack> {
  const ports = await servicePorts();
  return mode === 'embedded' ? startEmbedded({ ...env, ...ports }, tempDir) : startProcesses({ ...env, ...ports }, tempDir);
}

async function startEmbedded(env: NodeJS.ProcessEnv, tempDir: string): Promise<SoakStack> {
  const child = startChild('gateway', [await compiledGateway(ROOT, tempDir)], env, true);
  const ready = await new Promise<{ edgePort: number; pid: number }>((resolve, reject) => {
    child.proc.on('message', (m: { ready?: boolean; edgePort: number; pid: number }) => m.ready && resolve(m));
    child.proc.once('exit', (code) => { forgetChild(child); reject(new Error(`the gateway exited (code ${code}) before it was ready:\n${child.tail.join('\n')}`)); });
  });
  return { edgeOrigin: `http://${HOST}:${ready.edgePort}`, pids: { gateway: ready.pid }, children: [child], engines: null };
}

async function startProcesses(env: NodeJS.ProcessEnv, tempDir: string): Promise<SoakStack> {
  const mongoUrl = env.MONGO_URL;
  const brokers = env.KAFKA_BROKERS;
  if (!mongoUrl || !brokers) throw new Error('--mode processes needs MONGO_URL and KAFKA_BROKERS (source the engines env file)');
  const tag = randomBytes(4).toString('hex');
  const db = new URL(mongoUrl);
  db.pathname = `/gw_soak_${tag}`;
  const namespace = `soak-${tag}`;
  const serviceEnv: NodeJS.ProcessEnv = {
    ...env, STORE: 'mongo', MONGO_URL: db.toString(), BUS: 'kafka', KAFKA_BROKERS: brokers, BUS_NAMESPACE: namespace,
    GATEWAY_IDENTITY_SECRET: randomBytes(48).toString('base64url'), WEBHOOK_SECRETS_KEY: randomBytes(48).toString('base64url'),
  };
  // One at a time: each build type-checks and installs, and the machine has two cores.
  const builds: string[] = [];
  for (const name of SERVICES) builds.push(await compiledBuild(ROOT, tempDir, name, [EXIT_WITH_PARENT]));
  const children = SERVICES.map((name, i) => startChild(name, [
    '--import', path.join(builds[i]!, EXIT_WITH_PARENT.replace(/\.ts$/, '.js')), path.join(builds[i]!, 'main.js'),
  ], serviceEnv, true));
  const readyz = (name: string) => name === 'edge' ? `http://${HOST}:${env.EDGE_ADMIN_PORT}/readyz` : `${env[`${name.toUpperCase()}_HTTP_URL`]}/readyz`;
  // Ready with nothing degraded: the consumers, which join in the background, have joined too.
  const settled = async (name: string) => {
    if (name === 'console') return (await getStatus(readyz(name))) === 200;
    const res = await fetch(readyz(name));
    return res.ok && ((await res.json()) as { degraded?: string[] }).degraded?.length === 0;
  };
  await waitFor('every service ready', async () => (await Promise.all(SERVICES.map(settled))).every(Boolean), 120_000, children);
  return {
    edgeOrigin: `http://${HOST}:${env.EDGE_PORT}`,
    pids: Object.fromEntries(children.map((c) => [c.name, c.proc.pid!])),
    children,
    engines: { mongo_database: db.pathname.slice(1), bus_namespace: namespace },
  };
}
