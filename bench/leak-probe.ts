/**
 * Drives N chat calls through the single-process stack in this process, then reports the live heap after a
 * full GC (run with --expose-gc); SNAP=<file> also writes a heap snapshot there. A quick check that memory
 * does not grow with calls, before the long soak (bench/soak.ts):
 *
 *   node --expose-gc --import tsx bench/leak-probe.ts 40000
 *   node --expose-gc --import tsx bench/leak-probe.ts 80000     # the heap should not double
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { Pool } from 'undici';
import { createLogger } from '@gw/platform';
import { startLocalStack } from '@gw/local-stack';

const KEY = 'sk-gw-v1-leakprobe-management-key-000000';

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 20_000);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-leak-'));
  const stack = await startLocalStack({
    dataDir,
    env: { SIMULATOR_API_KEY: 'local-simulator', ...process.env, SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_leak', credit_usd: '100000', management_key: KEY }]) },
    logger: createLogger(null, 'error'),
    simulatorPort: 4010,
  });
  const pool = new Pool(`http://127.0.0.1:${stack.edge.httpPort}`, { connections: 16 });
  const body = JSON.stringify({ model: 'simulated/echo-chat', messages: [{ role: 'user', content: 'leak probe hello' }] });
  let started = 0;
  const loop = async () => {
    while (started < calls) {
      started++;
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, loop));
  // Let the usage, statistics and archive consumers catch up before measuring.
  await new Promise((r) => setTimeout(r, 3_000));
  const heaps = await stack.heaps();
  // The snapshot is the main thread's; billing's worker has a heap of its own, reported beside it.
  if (process.env.SNAP) writeHeapSnapshot(process.env.SNAP);
  const used = Object.entries(heaps).map(([thread, h]) => `${thread} ${(h.used / 1e6).toFixed(1)} MB`).join(', ');
  process.stdout.write(`heap used ${used} after ${calls} calls\n`);
  await pool.close();
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
