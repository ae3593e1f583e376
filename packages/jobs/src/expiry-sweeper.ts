import type { Logger } from '@gw/platform';
import type { JobStore } from './job-store';

/**
 * The store has no TTL, so queued jobs past their `expires_at_ms` are marked `expired` here. Every instance
 * may run one: the update is guarded by `status: queued`, so a job a worker claimed meanwhile is left alone.
 */
export class JobExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly jobs: Pick<JobStore<unknown, unknown>, 'kind' | 'expireQueued'>, private readonly intervalMs: number, private readonly logger: Logger) {}

  start(): void {
    this.timer = setInterval(() => { this.sweeping = this.sweep(); }, this.intervalMs);
    this.timer.unref();
  }

  async sweep(): Promise<void> {
    try {
      const expired = await this.jobs.expireQueued();
      if (expired > 0) this.logger.info({ expired, kind: this.jobs.kind }, 'expired queued jobs');
    } catch (err) {
      this.logger.warn({ err, kind: this.jobs.kind }, 'job sweep failed; retrying next interval');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }
}
