import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  closeServer, createHttpApp, finishHttpApp, Health, IdentitySigner, IdentityVerifier, listen, Metrics, type GrpcServerHandle, type Logger, type RunningService,
} from '@gw/platform';
import type { Bus } from '@gw/bus';
import type { Store } from '@gw/store';
import type { KeysConfig } from './config';
import { startKeysGrpcServer } from './grpc-server';
import { mountKeyRoutes } from './http-routes';
import { KeyStore } from './key-store';
import { BillingKeyUsage, type KeyUsageSource } from './key-usage';
import { KeysService, type KeysServiceDeps } from './keys-service';

export interface KeysServiceOptions {
  config: Pick<KeysConfig, 'KEYS_HTTP_PORT' | 'KEYS_GRPC_PORT' | 'BILLING_GRPC_ADDR' | 'SEED_ACCOUNTS' | 'GATEWAY_IDENTITY_SECRET' | 'BIND_HOST'>
    & Partial<Pick<KeysConfig, 'ACCESS_LOG'>>;
  store: Store;
  bus: Bus;
  logger: Logger;
  /** Where a generated bootstrap secret is shown, once (never the logs): a terminal or an owner-only file. */
  announce: KeysServiceDeps['announce'];
  /** Clock, for tests of expiry. */
  now?: () => Date;
}

const BODY_LIMIT_BYTES = 64 * 1024;

/** Starts the keys service on engines the caller owns (and closes): HTTP key management + gRPC Authenticate. */
export async function startKeysService(opts: KeysServiceOptions): Promise<RunningService> {
  const { config, store, bus, logger } = opts;
  const host = config.BIND_HOST;
  const keys = KeyStore.over(store);
  await keys.ensureIndexes();

  const usage: KeyUsageSource = new BillingKeyUsage(config.BILLING_GRPC_ADDR, new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'keys'));
  const service = new KeysService({
    keys, usage, bus, logger, now: opts.now, announce: opts.announce,
  });
  let http: Server | undefined;
  let grpc: GrpcServerHandle | undefined;
  try {
    await service.ensureBootstrapKeys(config.SEED_ACCOUNTS);

    const metrics = new Metrics('keys');
    // Without the bus a key change is still saved; edge caches then drop it by their TTL instead of at once.
    const health = new Health({ logger, metrics }).addCheck('store', () => store.ping()).addCheck('bus', () => bus.ping(), 'degraded');
    const app = createHttpApp({
      logger, health, metrics, bodyLimitBytes: BODY_LIMIT_BYTES, identity: new IdentityVerifier(config.GATEWAY_IDENTITY_SECRET), accessLog: config.ACCESS_LOG,
    });
    mountKeyRoutes(app, service, logger, opts.now);
    finishHttpApp(app, logger);

    http = await listen(app, config.KEYS_HTTP_PORT, host);
    grpc = await startKeysGrpcServer({ address: `${host}:${config.KEYS_GRPC_PORT}`, service, health, logger });
    const httpPort = (http.address() as AddressInfo).port;
    logger.info({ httpPort, grpcPort: grpc.port }, 'keys service started');

    const [httpServer, grpcServer] = [http, grpc];
    return {
      name: 'keys',
      httpPort,
      grpcPort: grpc.port,
      health,
      async stop() {
        health.startDraining();
        await Promise.all([closeServer(httpServer), grpcServer.shutdown()]);
        usage.close();
      },
    };
  } catch (err) {
    // A half-started service must not keep ports or channels open.
    await Promise.all([http && closeServer(http, 0), grpc?.shutdown(0)]);
    usage.close();
    throw err;
  }
}
