import Datastore from '@seald-io/nedb';
import type { Logger } from '@gw/platform';
import { SerialQueue } from './serial-queue';

/** Datafiles open in this process: two NeDB instances appending to one file would corrupt it. */
const openPaths = new Set<string>();

/**
 * One collection's NeDB datafile: loaded on first use, compacted periodically and on close, with the serial
 * queue its mutations go through.
 */
export class Datafile {
  readonly queue = new SerialQueue();
  private loading: Promise<Datastore> | undefined;
  private compactionTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly compactionIntervalMs: number,
    private readonly log: Logger,
  ) {}

  assertOpen(): void {
    if (this.closed) throw new Error(`Embedded store is closed (${this.path})`);
  }

  /** The loaded datastore; the first call loads the datafile. */
  datastore(): Promise<Datastore> {
    if (!this.loading) {
      this.assertOpen();
      const loading = this.load();
      // A failed load is retried by the next call rather than remembered.
      loading.catch(() => {
        if (this.loading === loading) this.loading = undefined;
      });
      this.loading = loading;
    }
    return this.loading;
  }

  /** NeDB's internal index table; read-only use, to know which fields an equality can be looked up by. */
  static indexedFields(ds: Datastore): ReadonlySet<string> {
    return new Set(Object.keys((ds as unknown as { indexes: Record<string, unknown> }).indexes));
  }

  private async load(): Promise<Datastore> {
    if (openPaths.has(this.path)) throw new Error(`Datafile ${this.path} is already open in this process`);
    openPaths.add(this.path);
    try {
      const ds = new Datastore({ filename: this.path });
      await ds.loadDatabaseAsync();
      // Our own timer rather than NeDB's setAutocompactionInterval: NeDB's leaves a failed compaction as an
      // unhandled rejection (which ends the process) and keeps the event loop alive.
      this.compactionTimer = setInterval(() => {
        ds.compactDatafileAsync().catch((err: unknown) => this.log.error({ err, path: this.path }, 'compaction failed'));
      }, this.compactionIntervalMs);
      this.compactionTimer.unref();
      return ds;
    } catch (err) {
      openPaths.delete(this.path);
      throw err;
    }
  }

  /** Lets queued mutations finish, then compacts the datafile and releases it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.idle();
    const ds = await this.loading?.catch(() => undefined);
    if (!ds) return;
    clearInterval(this.compactionTimer);
    try {
      await ds.compactDatafileAsync();
    } finally {
      openPaths.delete(this.path);
    }
  }
}
