import { JobExpirySweeper, JobWorkerPool } from '@gw/jobs';
import type { Logger } from '@gw/platform';
import type { Store } from '@gw/store';
import type { Router } from 'express';
import type { InferenceConfig } from '../config';
import { asyncChatRoutes } from './async-chat-routes';
import { AsyncChatService, type AsyncChatDeps } from './async-chat-service';
import { chatJobStore, type ChatJobPayload, type ChatJobResult } from './chat-job';
import { chatJobHandler, type ChatCompleter } from './chat-job-runner';
import { moveLegacyChatJobs } from './legacy-chat-jobs';

export type AsyncChatConfig = Pick<InferenceConfig,
  'ASYNC_CHAT_WORKERS' | 'ASYNC_CHAT_LEASE_MS' | 'ASYNC_CHAT_POLL_MS' | 'ASYNC_CHAT_CANCEL_CHECK_MS'
  | 'ASYNC_CHAT_EXPIRES_AFTER_MS' | 'ASYNC_CHAT_SWEEP_MS' | 'ASYNC_CHAT_SHUTDOWN_GRACE_MS'>;

export interface AsyncChatWiring {
  store: Store;
  chat: ChatCompleter & AsyncChatDeps['chat'];
  flushUsage: () => Promise<void>;
  config: AsyncChatConfig;
  logger: Logger;
}

export interface RunningAsyncChat {
  router: Router;
  /** Stops the workers (in-flight jobs finish or are handed back) and the sweeper. */
  stop(): Promise<void>;
}

/** Async chat jobs for one inference instance: routes, this instance's workers and its expiry sweeper. */
export async function startAsyncChat({ store, chat, flushUsage, config, logger }: AsyncChatWiring): Promise<RunningAsyncChat> {
  const jobs = chatJobStore(store);
  await jobs.ensureIndexes();
  const log = logger.child({ component: 'async-chat' });
  await moveLegacyChatJobs(store, log);
  const workers = new JobWorkerPool<ChatJobPayload, ChatJobResult>({
    jobs, logger: log,
    handler: chatJobHandler({ chat, flushUsage, logger: log, flushRetryMs: Math.min(1_000, config.ASYNC_CHAT_LEASE_MS / 3) }),
    workers: config.ASYNC_CHAT_WORKERS,
    leaseMs: config.ASYNC_CHAT_LEASE_MS,
    pollMs: config.ASYNC_CHAT_POLL_MS,
    cancelCheckMs: config.ASYNC_CHAT_CANCEL_CHECK_MS,
    shutdownGraceMs: config.ASYNC_CHAT_SHUTDOWN_GRACE_MS,
  });
  const sweeper = new JobExpirySweeper(jobs, config.ASYNC_CHAT_SWEEP_MS, log);
  const service = new AsyncChatService({
    jobs, chat, workers,
    expiresAfterMs: config.ASYNC_CHAT_EXPIRES_AFTER_MS,
    // Long enough for a worker elsewhere to notice the flag; bounded so a cancel answers promptly.
    cancelWaitMs: Math.min(2 * config.ASYNC_CHAT_CANCEL_CHECK_MS + 500, 5_000),
  });
  workers.start();
  sweeper.start();
  return {
    router: asyncChatRoutes(service),
    stop: async () => {
      await sweeper.stop();
      await workers.stop();
    },
  };
}
