import { loadBatchConfig, startBatchService } from '@gw/batch';
import { loadConsoleConfig, startConsoleService } from '@gw/console';
import { blobConfigFor, createBlobStore } from '@gw/blobs';
import { loadEdgeConfig, startEdge, type RunningEdge } from '@gw/edge';
import { loadInferenceConfig, startInferenceService } from '@gw/inference';
import { loadKeysConfig, startKeysService } from '@gw/keys';
import { loadMediaConfig, startMediaService } from '@gw/media';
import { loadWebhooksConfig, readOrCreateSecretsKey, startWebhooksService } from '@gw/webhooks';
import { createBus, type Bus } from '@gw/bus';
import { createStore, WalCheckpointer, type Store } from '@gw/store';
import { startSimulators } from '@gw/simulators';
import type { BillingWorkerData } from './billing-worker';
import { heapUse, startWorkerService, type HeapUse, type WorkerService } from './worker-service';
import type { Logger, RunningService } from '@gw/platform';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';

export interface LocalStackOptions {
  dataDir: string;
  /** Environment the services read their configuration from (ports, seeds, catalogue). */
  env: NodeJS.ProcessEnv;
  /** A logger naming no service (`createLogger(null)`): each service binds its own name once. */
  logger: Logger;
  /** Start the provider simulators (every format on this one port) the default catalogue routes its simulated models to. */
  simulatorPort?: number;
}

export interface LocalStack {
  edge: RunningEdge;
  bus: Bus;
  services: RunningService[];
  /** Each thread's heap (after a full collection under `--expose-gc`): the main thread's and billing's. */
  heaps(): Promise<Record<'main' | 'billing', HeapUse>>;
  stop(): Promise<void>;
}

/**
 * Every service in one process with the embedded engines: each service keeps its own on-disk store (it owns
 * its collections) and all share one durable embedded bus. The same start functions run as separate
 * processes in production; only the wiring differs. Billing runs in a worker thread (see billing-worker):
 * its consumers are most of the work a call leaves behind, and there they use the second core instead of
 * the hot path's.
 */
export async function startLocalStack(opts: LocalStackOptions): Promise<LocalStack> {
  const { logger } = opts;
  // One process, one secret: when none is configured, a random one that lives only in this process's memory.
  const secrets: NodeJS.ProcessEnv = {
    ...opts.env,
    GATEWAY_IDENTITY_SECRET: opts.env.GATEWAY_IDENTITY_SECRET || randomBytes(48).toString('base64url'),
    WEBHOOK_SECRETS_KEY: opts.env.WEBHOOK_SECRETS_KEY || readOrCreateSecretsKey(path.join(opts.dataDir, 'webhooks-secrets.key')),
  };
  // Read before anything starts: a bad EDGE_PORT is named as such, not as the media address made from it.
  const edgeConfig = loadEdgeConfig(secrets);
  const env: NodeJS.ProcessEnv = {
    ...secrets,
    // Signed media links point at this machine's edge unless a public address is configured.
    MEDIA_PUBLIC_BASE_URL: opts.env.MEDIA_PUBLIC_BASE_URL || `http://127.0.0.1:${edgeConfig.EDGE_PORT}`,
  };
  const stores: Store[] = [];
  // One thread checkpoints every store's WAL, so no commit on the event loop has to.
  const checkpointer = new WalCheckpointer({ logger: logger.child({ component: 'wal-checkpointer' }) });
  const openStore = (name: string) => {
    const s = createStore({ engine: 'embedded', dataDir: path.join(opts.dataDir, name), checkpointer, scanReportFile: env.STORE_SCAN_REPORT_FILE || undefined }, logger.child({ service: name, component: 'store' }));
    stores.push(s);
    return s;
  };
  // Every thread that opens the bus files wakes the others' consumers through this channel. This thread's bus
  // is the files' one trimmer: it trims every topic, those only billing's thread publishes or reads included.
  const busWakeChannel = `gw-bus:${path.resolve(opts.dataDir, 'bus')}`;
  const bus = createBus({ engine: 'embedded', store: openStore('bus'), wakeChannel: busWakeChannel }, logger.child({ service: 'bus' }));
  const simulator = opts.simulatorPort !== undefined ? await startSimulators({ port: opts.simulatorPort }) : null;

  const billingData: BillingWorkerData = { dataDir: opts.dataDir, env, logLevel: logger.level, busWakeChannel };
  // Billing starts on its own thread while the others start on this one; the edge opens once all are up.
  const billingStart = startWorkerService(path.join(__dirname, `billing-worker${path.extname(__filename)}`), 'billing', billingData, (code, err) => {
    // Billing gone means calls can no longer be held or billed: end the process, as a crash on this thread would.
    logger.fatal({ service: 'billing', code, err }, 'billing worker thread ended unexpectedly');
    process.exit(1);
  });
  // Whatever has started, so that stop() and a start that fails part-way end the same things in the same order.
  const onThisThread: RunningService[] = [];
  let billing: WorkerService | null = null;
  let edge: RunningEdge | null = null;
  const started = <S extends RunningService>(service: S): S => {
    onThisThread.push(service);
    return service;
  };
  const startOnThisThread = async () => {
    // This terminal is the operator's own: a generated bootstrap secret is shown here, once.
    const keys = started(await startKeysService({
      config: loadKeysConfig(env), store: openStore('keys'), bus, logger: logger.child({ service: 'keys' }),
      announce: (line) => { process.stdout.write(`${line}\n`); },
    }));
    const inference = started(await startInferenceService({ config: loadInferenceConfig(env), store: openStore('inference'), bus, logger: logger.child({ service: 'inference' }), env }));
    // Batch files live under the data dir, next to the batch service's store.
    const batch = started(await startBatchService({ config: loadBatchConfig(env), store: openStore('batch'), bus, blobs, logger: logger.child({ service: 'batch' }), env }));
    // Media bytes (images, audio, videos) live under the data dir too, apart from the batch files.
    const media = started(await startMediaService({ config: loadMediaConfig(env), store: openStore('media'), bus, blobs: mediaBlobs, logger: logger.child({ service: 'media' }), env }));
    const webhooks = started(await startWebhooksService({ config: loadWebhooksConfig(env), store: openStore('webhooks'), bus, logger: logger.child({ service: 'webhooks' }) }));
    const consoleService = started(await startConsoleService({ config: loadConsoleConfig(env), logger: logger.child({ service: 'console' }) }));
    return { keys, inference, batch, media, webhooks, consoleService };
  };
  const blobs = createBlobStore(blobConfigFor({ engine: 'embedded', dataDir: path.join(opts.dataDir, 'batch') }));
  const mediaBlobs = createBlobStore(blobConfigFor({ engine: 'embedded', dataDir: path.join(opts.dataDir, 'media') }));
  /** The edge first, then this thread's services newest first, then billing; then the engines. */
  const running = (): RunningService[] => [...(edge ? [edge] : []), ...[...onThisThread].reverse(), ...(billing ? [billing] : [])];
  const stopAll = async () => {
    for (const s of running()) await s.stop();
    await simulator?.close();
    await bus.close();
    await blobs.close();
    await mediaBlobs.close();
    for (const s of stores) await s.close();
    await checkpointer.close();
  };
  try {
    const [onThread, billingStarted] = await Promise.allSettled([startOnThisThread(), billingStart]);
    if (billingStarted.status === 'fulfilled') billing = billingStarted.value;
    if (onThread.status === 'rejected') throw onThread.reason;
    if (billingStarted.status === 'rejected') throw billingStarted.reason;
    const { keys, inference, batch, media, webhooks, consoleService } = onThread.value;
    // The edge hands requests to the services on its thread; their own ports still serve other callers (billing's serve the edge).
    edge = await startEdge({
      config: edgeConfig, bus, logger: logger.child({ service: 'edge' }),
      inProcess: {
        inference: inference.handIn, keys: keys.handIn, batch: batch.handIn, webhooks: webhooks.handIn,
        media: media.handIn, console: consoleService.handIn,
      },
    });
  } catch (err) {
    // Nothing half-started is left behind: its ports, threads and open files end before the failure is reported.
    await stopAll().catch((stopErr: unknown) => logger.error({ err: stopErr }, 'stopping a local stack that failed to start'));
    throw err;
  }
  const services = running();
  const billingThread = billing!;
  return {
    edge: edge!,
    bus,
    services,
    heaps: async () => ({ main: heapUse(), billing: await billingThread.heap() }),
    stop: stopAll,
  };
}
