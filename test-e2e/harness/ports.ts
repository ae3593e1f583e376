import { createServer } from 'node:net';

/** A port the OS says is free right now (bound and released on loopback). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
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
