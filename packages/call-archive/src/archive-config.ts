import { z } from 'zod';
import { createBatchingPublisher, type BatchingPublisher, type Outbox } from '@gw/bus';
import type { Logger } from '@gw/platform';
import { CallArchiver } from './call-archiver';

/** The archive's settings, the same in every service that makes calls (inference, media, batch). */
export const archiveEnv = {
  /** The call archive: `full` (bodies and metadata), `metadata` (no bodies leave this service), `off`. */
  ARCHIVE_MODE: z.enum(['full', 'metadata', 'off']).default('full'),
  /** Each archived body is cut to this many bytes (and flagged truncated), so a record fits one bus message (1 MiB). */
  ARCHIVE_MAX_BODY_BYTES: z.coerce.number().int().min(1024).max(192 * 1024).default(64 * 1024),
};

export interface ArchiveConfig {
  ARCHIVE_MODE: 'full' | 'metadata' | 'off';
  ARCHIVE_MAX_BODY_BYTES: number;
}

/**
 * The service's archiver on its outbox. Archive records can be large: they get their own batching publisher,
 * whose publishes are cut by bytes to the bus's budget; `register` hands it to the service's stop order.
 */
export function openCallArchiver(config: ArchiveConfig, outbox: Outbox, logger: Logger,
  register: (name: string, publisher: BatchingPublisher) => BatchingPublisher, lingerMs?: number): CallArchiver {
  if (config.ARCHIVE_MODE === 'off') return CallArchiver.off(logger);
  const publisher = register('archive-publisher', createBatchingPublisher({ outbox, logger, ...(lingerMs === undefined ? {} : { lingerMs }), ...CallArchiver.publishOptions }));
  return new CallArchiver(publisher, { mode: config.ARCHIVE_MODE, maxBodyBytes: config.ARCHIVE_MAX_BODY_BYTES }, logger);
}
