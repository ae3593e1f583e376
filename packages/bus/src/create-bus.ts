import type { Logger } from '@gw/platform';
import type { Store } from '@gw/store';
import type { Bus } from './port';
import { createEmbeddedBus } from './embedded';
import { namespacedBus } from './namespaced-bus';

/** Optional tuning fields are for tests and operators; the required ones are all a deployment needs. */
export type BusConfig =
  | { engine: 'embedded'; store: Store; leaseMs?: number; pollMs?: number; trimIntervalMs?: number; retentionMs?: number; retentionEntries?: number; wakeChannel?: string }
  | { engine: 'kafka'; brokers: string[]; clientId: string; partitions?: number; sessionTimeoutMs?: number; namespace?: string };

export function createBus(cfg: BusConfig, logger: Logger): Bus {
  switch (cfg.engine) {
    case 'embedded':
      return createEmbeddedBus({ ...cfg, logger });
    case 'kafka': {
      // Loaded only when chosen: a process on the embedded engine needs none of the Kafka client.
      const { createKafkaBus } = require('./kafka') as typeof import('./kafka');
      return namespacedBus(createKafkaBus({ ...cfg, logger }), cfg.namespace ?? '');
    }
    default:
      throw new Error(`unknown bus engine ${(cfg as { engine: string }).engine}`);
  }
}
