/** Loopback helpers: free ports, readiness waits, single HTTP calls, timeouts. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'undici';
import { alive, type Child } from './children';

export const HOST = '127.0.0.1';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

/**
 * `n` distinct ports free on loopback right now, chosen below the kernel's ephemeral range: a port from
 * that range can be taken by one of the gateway's own outgoing connections (keys, billing, bus, upstream)
 * between this check and its listen, which fails the start with EADDRINUSE.
 */
export async function freePorts(n: number): Promise<number[]> {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch { /* not Linux */ }
  const low = 10_000;
  const high = Math.min(ephemeralLow, 65_536) - 1;
  const ports = new Set<number>();
  for (let tries = 0; ports.size < n && tries < 2000; tries++) {
    const port = high > low + 1000 ? low + Math.floor(Math.random() * (high - low)) : 0;
    if (port === 0) break;
    if (!ports.has(port) && (await canListen(port))) ports.add(port);
  }
  while (ports.size < n) {
    // No room below the ephemeral range: let the OS choose.
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, HOST, () => {
        const { port: p } = srv.address() as { port: number };
        srv.close(() => resolve(p));
      });
    });
    ports.add(port);
  }
  return [...ports];
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, watch: Child[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = watch.find((c) => !alive(c));
    if (dead) throw new Error(`${dead.name} exited (code ${dead.proc.exitCode}, signal ${dead.proc.signalCode}) while waiting for ${what}`);
    try {
      if (await check()) return;
    } catch { /* not yet */ }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

export async function getStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(url, { headers, headersTimeout: 2000, bodyTimeout: 2000 });
  await res.body.dump();
  return res.statusCode;
}

export async function postJson(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; json: any }> {
  const res = await request(url, { method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await res.body.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: res.statusCode, json };
}


export function withTimeout<T>(p: PromiseLike<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}
