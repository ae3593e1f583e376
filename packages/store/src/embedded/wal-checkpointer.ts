import { Worker } from 'node:worker_threads';
import type { Logger } from '@gw/platform';
import type { Synchronous } from './sqlite-database';

/** What the checkpointer has done for one file, since it was added. */
export interface CheckpointStats {
  path: string;
  /** Checkpoints that copied at least one frame. */
  checkpoints: number;
  /** WAL frames copied into the database file. */
  frames: number;
  /** The longest checkpoint, in ms (it ran on the checkpointer's thread, not the event loop). */
  longestMs: number;
}

export interface WalCheckpointerOptions {
  /** How often each file's WAL is checkpointed (default 250 ms). */
  intervalMs?: number;
  /** How long adding a file waits for another connection's lock before it fails (default 2 s). */
  openWaitMs?: number;
  logger?: Logger;
}

/** A checkpoint this long is logged: the disk is slow, and the WAL grows meanwhile. */
const SLOW_CHECKPOINT_MS = 1_000;
/** A checkpoint that could not copy every frame (a commit landed meanwhile) is retried this soon, a few times. */
const CATCH_UP_MS = 10;
const CATCH_UP_TRIES = 5;
/** Opening waits this long for a lock; a file it still cannot open is checkpointed by its commits instead. */
const OPEN_WAIT_MS = 2_000;

type Request =
  | { id: number; op: 'add'; path: string; synchronous: Synchronous }
  | { id: number; op: 'remove'; path: string }
  | { id: number; op: 'stats' }
  | { id: number; op: 'close' };

type Reply =
  | { id: number; ok: true; value?: unknown }
  | { id: number; ok: false; message: string }
  | { event: 'slow' | 'failed'; path: string; ms?: number; message?: string };

/*
 * The thread's code, plain CommonJS so it runs the same under tsx, jest and compiled output. It keeps one
 * connection per file and, every interval, runs `PRAGMA wal_checkpoint(PASSIVE)`: that copies committed frames
 * into the database file without taking the write lock, so the event loop's commits go on meanwhile. Once every
 * frame is copied, the next commit starts the WAL over from its beginning, so the file stays small.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const files = new Map();
function checkpoint(file) {
  const started = performance.now();
  let row;
  try {
    row = file.checkpoint.get();
  } catch (err) {
    // Once per spell of failures, not every interval.
    if (!file.failing) parentPort.postMessage({ event: 'failed', path: file.path, message: String(err && err.message || err) });
    file.failing = true;
    return true;
  }
  file.failing = false;
  const ms = performance.now() - started;
  // The WAL starts over once fully copied; the counts then start from zero too.
  const restarted = row.log < file.lastLog || row.checkpointed < file.lastBackfill;
  const copied = restarted ? row.checkpointed : row.checkpointed - file.lastBackfill;
  file.lastBackfill = row.checkpointed;
  file.lastLog = row.log;
  if (copied > 0) {
    file.stats.checkpoints += 1;
    file.stats.frames += copied;
    file.stats.longestMs = Math.max(file.stats.longestMs, Math.round(ms));
  }
  if (ms >= workerData.slowMs) parentPort.postMessage({ event: 'slow', path: file.path, ms: Math.round(ms) });
  return row.busy === 0 && row.checkpointed >= row.log;
}
function tick() {
  for (const file of files.values()) {
    let tries = 0;
    const again = () => {
      // Stop when the file was removed (or removed and added again: that is another connection).
      if (files.get(file.path) !== file || checkpoint(file) || ++tries >= workerData.catchUpTries) return;
      setTimeout(again, workerData.catchUpMs);
    };
    again();
  }
}
const timer = setInterval(tick, workerData.intervalMs);
function closeFile(path) {
  const file = files.get(path);
  if (!file) return;
  files.delete(path);
  file.db.close();
}
parentPort.on('message', (m) => {
  try {
    if (m.op === 'add') {
      if (!files.has(m.path)) {
        const db = new DatabaseSync(m.path);
        try {
          // Setting up may meet another connection's lock (a recovery, a schema change): wait for it, briefly.
          db.exec('PRAGMA busy_timeout = ' + workerData.openWaitMs);
          db.exec('PRAGMA synchronous = ' + (m.synchronous === 'full' ? 'FULL' : 'NORMAL'));
          const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
          // A checkpoint never waits on the writer: one that finds the file busy tries again next time.
          db.exec('PRAGMA busy_timeout = 0');
          files.set(m.path, { path: m.path, db, checkpoint, lastBackfill: 0, lastLog: 0, failing: false,
            stats: { path: m.path, checkpoints: 0, frames: 0, longestMs: 0 } });
        } catch (err) {
          // Left open, it would hold the file (and its WAL) for as long as the process lives.
          db.close();
          throw err;
        }
      }
      parentPort.postMessage({ id: m.id, ok: true });
    } else if (m.op === 'remove') {
      closeFile(m.path);
      parentPort.postMessage({ id: m.id, ok: true });
    } else if (m.op === 'stats') {
      parentPort.postMessage({ id: m.id, ok: true, value: [...files.values()].map((f) => ({ ...f.stats })) });
    } else if (m.op === 'close') {
      clearInterval(timer);
      for (const path of [...files.keys()]) closeFile(path);
      parentPort.postMessage({ id: m.id, ok: true });
      parentPort.close();
    }
  } catch (err) {
    parentPort.postMessage({ id: m.id, ok: false, message: String(err && err.message || err) });
  }
});
`;

/**
 * SQLite's WAL checkpoints on a thread of their own, for every embedded database of a process. `node:sqlite`
 * runs commits on the event loop, and SQLite runs an automatic checkpoint inside the commit that crosses its
 * threshold: that commit then holds the loop while it copies megabytes and syncs the file (30–60 ms under load,
 * over a second on a large file). With this checkpointer the WAL seldom reaches the threshold; the automatic
 * checkpoint stays on as the fallback for when this thread falls behind.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  private nextId = 1;
  private closed: Promise<void> | null = null;
  private exited: Error | null = null;

  constructor(private readonly opts: WalCheckpointerOptions = {}) {
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      // The thread's name in `ps -T` and /proc (at most 15 characters there), where its CPU shows apart from the event loops'.
      name: 'wal-checkpoint',
      workerData: { intervalMs: opts.intervalMs ?? 250, slowMs: SLOW_CHECKPOINT_MS, catchUpMs: CATCH_UP_MS, catchUpTries: CATCH_UP_TRIES, openWaitMs: opts.openWaitMs ?? OPEN_WAIT_MS },
      // A checkpointer holds a few connections and copies pages in SQLite's own memory: a small heap is plenty.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
    // Its own timer must not keep a process alive that has nothing else to do.
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.onReply(reply));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => {
      this.exited = new Error(`WAL checkpointer thread exited (code ${code})`);
      this.fail(this.exited);
    });
  }

  /** Starts checkpointing the database at `path` (already in WAL mode). */
  add(path: string, synchronous: Synchronous = 'normal'): Promise<void> {
    return this.request({ op: 'add', path, synchronous }).then(() => undefined);
  }

  /** Stops checkpointing `path` and closes the thread's connection to it; call before closing the database. */
  remove(path: string): Promise<void> {
    return this.request({ op: 'remove', path }).then(() => undefined);
  }

  stats(): Promise<CheckpointStats[]> {
    return this.request({ op: 'stats' }) as Promise<CheckpointStats[]>;
  }

  /** Closes the thread's connections and ends the thread. */
  close(): Promise<void> {
    this.closed ??= this.request({ op: 'close' }).then(
      () => undefined,
      () => undefined,
    );
    return this.closed;
  }

  private request(body: Record<string, unknown> & { op: Request['op'] }): Promise<unknown> {
    if (this.exited) return Promise.reject(this.exited);
    if (this.closed) return Promise.reject(new Error('WAL checkpointer is closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // A pending answer keeps the process alive until it comes; nothing else does.
      if (this.waiting.size === 1) this.worker.ref();
      this.worker.postMessage({ ...body, id });
    });
  }

  private onReply(reply: Reply): void {
    if ('event' in reply) {
      const log = this.opts.logger;
      if (reply.event === 'slow') log?.warn({ file: reply.path, ms: reply.ms }, 'slow WAL checkpoint (off the event loop)');
      else log?.error({ file: reply.path, err: reply.message }, 'WAL checkpoint failed; the commit-time checkpoint still runs');
      return;
    }
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker.unref();
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(new Error(reply.message));
  }

  private fail(err: Error): void {
    if (!this.closed) this.opts.logger?.error({ err }, 'WAL checkpointer thread failed; commit-time checkpoints go on');
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }
}
