import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Logger } from '@gw/platform';
import type { ScanReport } from './scan-report';
import type { WalCheckpointer } from './wal-checkpointer';

/** SQLite's extended result codes for a unique index or primary key violation. */
const UNIQUE_VIOLATION = new Set([2067, 1555]);

export function isUniqueViolation(err: unknown): boolean {
  return UNIQUE_VIOLATION.has((err as { errcode?: unknown } | null)?.errcode as number);
}

/** How many queued writes one transaction takes at most, so one commit never blocks the event loop for long. */
const MAX_BATCH = 500;
const STATEMENT_CACHE = 200;
/**
 * A write transaction that waited or held the file's write lock this long is logged: another connection to the
 * file (another thread or process) waits that long too, with its event loop blocked, since `node:sqlite` is
 * synchronous.
 */
const SLOW_WRITE_MS = 500;

interface QueuedWrite {
  run(): unknown;
  /** What the write is (`collection.operation`), for the slow-write warning. */
  label: string;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export type Synchronous = 'normal' | 'full';

/**
 * One SQLite database file in WAL mode, through Node's built-in `node:sqlite`. Writes are group-committed:
 * every write asked for in one turn of the event loop runs in one transaction, each inside its own savepoint
 * (a failing write rolls back alone), and all of them resolve after the one commit. Each write is a synchronous
 * function, so its reads and writes form one atomic step — a guarded update cannot interleave with another.
 *
 * `synchronous=NORMAL` (the default) makes a commit durable against a crash of this process; a power loss or
 * OS crash may lose the last commits, never corrupt the file. `full` syncs the WAL on every group commit.
 */
export class SqliteDatabase {
  private readonly db: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();
  private queue: QueuedWrite[] = [];
  private flushing: Promise<void> | null = null;
  private open = true;
  private closing: Promise<void> | null = null;

  /** Resolves once the checkpointer has this file (or failed to take it: the commit-time checkpoint covers that). */
  private readonly checkpointed: Promise<void> | null;

  constructor(
    readonly path: string,
    synchronous: Synchronous = 'normal',
    private readonly logger?: Logger,
    private readonly checkpointer?: WalCheckpointer,
    /** Where filtered reads that scan a whole table are reported; none in normal operation. */
    readonly scanReport?: ScanReport,
  ) {
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA busy_timeout = 10000');
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    // A commit that crosses this many WAL pages runs a checkpoint inside it, on the event loop. With a
    // checkpointer (its own thread) the WAL seldom gets there, and this is the fallback. Without one, 10,000
    // pages (about 40 MB) instead of SQLite's 1,000 write each hot page (accounts, offsets, index roots) to the
    // database once per interval instead of ten times. Durability is the WAL's either way.
    this.db.exec('PRAGMA wal_autocheckpoint = 10000');
    this.checkpointed = checkpointer
      ? checkpointer.add(path, synchronous).catch((err: unknown) => {
          this.logger?.error({ file: path, err }, 'the WAL checkpointer could not open the file; checkpoints run at commit');
        })
      : null;
  }

  get isOpen(): boolean {
    return this.open;
  }

  assertOpen(): void {
    if (!this.open) throw new Error(`Embedded store is closed (${this.path})`);
  }

  /** A prepared statement from a small least-recently-used cache (filters with `$in` lists make many shapes). */
  statement(sql: string): StatementSync {
    let stmt = this.statements.get(sql);
    if (stmt) {
      this.statements.delete(sql);
    } else {
      if (this.statements.size >= STATEMENT_CACHE) this.statements.delete(this.statements.keys().next().value!);
      stmt = this.db.prepare(sql);
    }
    this.statements.set(sql, stmt);
    return stmt;
  }

  /** The steps of a statement's query plan (`EXPLAIN QUERY PLAN`), as SQLite words them; nothing is run. */
  queryPlan(sql: string): string[] {
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((step) => step.detail);
  }

  /** Runs schema statements at once, outside any queued transaction. */
  exec(sql: string): void {
    this.assertOpen();
    this.db.exec(sql);
  }

  /** Runs `fn` in one transaction now, synchronously (schema set-up and migration). */
  transaction<R>(fn: () => R): R {
    this.assertOpen();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  /** Queues a write for the next group commit; resolves with its result once that commit is on disk. */
  write<R>(run: () => R, label: string): Promise<R> {
    this.assertOpen();
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ run, label, resolve: resolve as (v: unknown) => void, reject });
      this.flushing ??= new Promise<void>((done) =>
        setImmediate(() => {
          try {
            while (this.queue.length > 0) this.commit(this.queue.splice(0, MAX_BATCH));
          } finally {
            this.flushing = null;
            done();
          }
        }),
      );
    });
  }

  /** One transaction for a batch: each write in its own savepoint (unless it is alone); all settle after the commit. */
  private commit(batch: QueuedWrite[]): void {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    // Prepared once: these run a few times per write, and exec() would parse them every time.
    const run = (sql: string) => void this.statement(sql).run();
    const alone = batch.length === 1;
    const asked = performance.now();
    let locked: number | null = null;
    let committing: number | null = null;
    // The longest write of the batch, named in the slow-write warning.
    let slowest = { label: '', ms: 0 };
    try {
      run('BEGIN IMMEDIATE');
      locked = performance.now();
      for (const w of batch) {
        const started = performance.now();
        if (alone) {
          outcomes.push({ ok: true, value: w.run() });
        } else {
          run('SAVEPOINT w');
          try {
            outcomes.push({ ok: true, value: w.run() });
            run('RELEASE w');
          } catch (err) {
            run('ROLLBACK TO w');
            run('RELEASE w');
            outcomes.push({ ok: false, value: err });
          }
        }
        const ms = performance.now() - started;
        if (ms > slowest.ms) slowest = { label: w.label, ms };
      }
      committing = performance.now();
      run('COMMIT');
    } catch (err) {
      // A lone write failed, or the transaction itself did (busy past the timeout, disk full): nothing was written.
      if (this.db.isTransaction) run('ROLLBACK');
      batch.forEach((w) => w.reject(err));
      return;
    } finally {
      const end = performance.now();
      // Not locked at all: the whole time was spent waiting for the lock (busy past the timeout).
      const waitedMs = (locked ?? end) - asked;
      const heldMs = locked === null ? 0 : end - locked;
      if (waitedMs >= SLOW_WRITE_MS || heldMs >= SLOW_WRITE_MS) {
        // commitMs apart from the writes' own time: a slow COMMIT is the disk (or the commit-time checkpoint), not the queries.
        const commitMs = committing === null ? null : Math.round(end - committing);
        this.logger?.warn({
          file: this.path, waitedMs: Math.round(waitedMs), heldMs: Math.round(heldMs), commitMs, writes: batch.length,
          slowestWrite: slowest.label, slowestWriteMs: Math.round(slowest.ms),
        }, 'slow write transaction on the embedded store');
      }
    }
    batch.forEach((w, i) => (outcomes[i].ok ? w.resolve(outcomes[i].value) : w.reject(outcomes[i].value)));
  }

  /** Lets queued writes commit, then closes the file. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    if (this.checkpointer) {
      await this.checkpointed;
      // The thread lets go of the file first, so this connection is the last and leaves no WAL behind.
      await this.checkpointer.remove(this.path).catch(() => undefined);
    }
    // Nothing awaits between the last flush and the close: a write queued meanwhile would find the file closed.
    while (this.flushing) await this.flushing;
    this.open = false;
    this.statements.clear();
    this.db.close();
  }
}
