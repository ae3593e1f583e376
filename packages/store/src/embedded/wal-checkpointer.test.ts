import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { WalCheckpointer } from './wal-checkpointer';

/** The files under `dir` this process holds open (the checkpointer's thread shares the process's descriptors). */
function openFilesUnder(dir: string): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir + path.sep) ? [path.relative(dir, target)] : [];
    } catch {
      return [];
    }
  });
}

describe('WalCheckpointer', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'gw-wal-checkpointer-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('a file it cannot open (another connection holds it locked) fails to add and is not held open', async () => {
    const file = path.join(dir, 'locked.sqlite');
    const holder = new DatabaseSync(file);
    holder.exec('PRAGMA journal_mode = WAL');
    // Exclusive locking: the holder keeps its lock once it has written, and no other connection gets in.
    holder.exec('PRAGMA locking_mode = EXCLUSIVE');
    holder.exec('CREATE TABLE t (x INTEGER)');
    const checkpointer = new WalCheckpointer({ intervalMs: 10, openWaitMs: 50 });
    try {
      await expect(checkpointer.add(file)).rejects.toThrow(/locked/);
      holder.close();
      expect(openFilesUnder(dir)).toEqual([]);
    } finally {
      if (holder.isOpen) holder.close();
      await checkpointer.close();
    }
  });

  test('a file it can open is checkpointed until removed, then released', async () => {
    const file = path.join(dir, 'open.sqlite');
    const db = new DatabaseSync(file);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (x INTEGER)');
    const checkpointer = new WalCheckpointer({ intervalMs: 10 });
    try {
      await checkpointer.add(file);
      for (let i = 0; i < 50; i++) db.exec(`INSERT INTO t VALUES (${i})`);
      const deadline = Date.now() + 5_000;
      let frames = 0;
      while (frames === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        frames = (await checkpointer.stats()).find((s) => s.path === file)?.frames ?? 0;
      }
      expect(frames).toBeGreaterThan(0);
      await checkpointer.remove(file);
      db.close();
      expect(openFilesUnder(dir)).toEqual([]);
    } finally {
      if (db.isOpen) db.close();
      await checkpointer.close();
    }
  });
});
