import { IdentitySigner, startService, type Logger, type RunningService } from '@gw/platform';
import { keysProto } from '@gw/proto';
import type { Bus } from '@gw/bus';
import type { Store } from '@gw/store';
import type { KeysConfig } from './config';
import { keysGrpcHandlers } from './grpc-server';
import { KEY_ROUTE_PATHS, keysRouter } from './http-routes';
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
  return startService({
    name: 'keys', logger, host: config.BIND_HOST, httpPort: config.KEYS_HTTP_PORT, grpcPort: config.KEYS_GRPC_PORT,
    identitySecret: config.GATEWAY_IDENTITY_SECRET, bodyLimitBytes: BODY_LIMIT_BYTES, accessLog: config.ACCESS_LOG,
    // The key endpoints answer plain JSON (OpenRouter shape), not the spec's envelope.
    plainJsonErrorPaths: KEY_ROUTE_PATHS,
  }, async ({ health, client }) => {
    const keys = KeyStore.over(store);
    await keys.ensureIndexes();

    const usage: KeyUsageSource = client('billing', new BillingKeyUsage(config.BILLING_GRPC_ADDR, new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'keys')));
    const service = new KeysService({
      keys, usage, bus, logger, now: opts.now, announce: opts.announce,
    });
    await service.ensureBootstrapKeys(config.SEED_ACCOUNTS);

    // Without the bus a key change is still saved; edge caches then drop it by their TTL instead of at once.
    health.addCheck('store', () => store.ping()).addCheck('bus', () => bus.ping(), 'degraded');
    return {
      routes: [keysRouter(service, opts.now)],
      grpc: [{ definition: keysProto.gateway.keys.v1.KeysService.service, handlers: keysGrpcHandlers(service, logger) }],
    };
  });
}
