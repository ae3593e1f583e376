import { createServer } from 'node:net';

/*
 * Ports handed to child services are taken below the kernel's ephemeral range (32768+ on Linux), one
 * block per jest worker. A port picked with listen(0) comes from the ephemeral range, and between its
 * release and the child's bind any outgoing connection of a neighbouring test may take it (a CI run
 * failed on EADDRINUSE so). Outgoing connections never use this range, and the workers never share a
 * block.
 */
const RANGE_START = 20_000;
const BLOCK_SIZE = 800; // 20000..26399: below the engines (27018, 27118) and the ephemeral range
const BLOCKS = 8;
const workerSlot = (Number(process.env.JEST_WORKER_ID ?? '1') - 1 + BLOCKS) % BLOCKS;
const blockStart = RANGE_START + workerSlot * BLOCK_SIZE;
// Files of one worker run one after another in fresh module registries: start each at a random point.
let cursor = Math.floor(Math.random() * BLOCK_SIZE);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A loopback port free right now, outside the ephemeral range, not handed out again by this worker until its block wraps. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < BLOCK_SIZE; tries++) {
    const port = blockStart + (cursor++ % BLOCK_SIZE);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${blockStart}..${blockStart + BLOCK_SIZE - 1}`);
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url);
  return res.ok;
}

/** Ready with nothing degraded: a service's consumers, which join in the background, have joined too. */
export async function httpSettled(url: string): Promise<boolean> {
  const res = await fetch(url);
  return res.ok && ((await res.json()) as { degraded?: string[] }).degraded?.length === 0;
}
