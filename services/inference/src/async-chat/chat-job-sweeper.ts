import type { Logger } from '@gw/platform';
import type { ChatJobStore } from './chat-job-store';

/**
 * The store has no TTL, so queued jobs past their `expires_at` estimate are marked `expired` here. Every
 * instance may run one: the update is guarded by `status: queued`, so a job a worker claimed meanwhile is
 * left alone.
 */
export class ChatJobSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly jobs: ChatJobStore, private readonly intervalMs: number, private readonly logger: Logger) {}

  start(): void {
    this.timer = setInterval(() => { this.sweeping = this.sweep(); }, this.intervalMs);
    this.timer.unref();
  }

  async sweep(): Promise<void> {
    try {
      const expired = await this.jobs.expireQueued();
      if (expired > 0) this.logger.info({ expired }, 'expired queued chat jobs');
    } catch (err) {
      this.logger.warn({ err }, 'chat job sweep failed; retrying next interval');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }
}
