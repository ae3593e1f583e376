/**
 * Open-loop load at a steady rate: call i is due at start + i / rate whatever the earlier calls are doing
 * (arrivals on a schedule, not a closed loop that slows down with the server), so a slow gateway shows as
 * growing latency and calls in flight rather than as a lower rate. Latency is measured from each call's
 * scheduled time, so time spent waiting for a free connection counts (no coordinated omission). A fixed
 * share of the calls stream (`stream: true`, read to `data: [DONE]`); the rest are plain chat. Results
 * are kept per window: `takeWindow()` returns what completed since the last call and starts a new one.
 */
import { Pool } from 'undici';
import { timedStream, type StreamTarget } from './stream-load';
import { percentile, round } from './stats';

export interface OpenLoopOptions {
  origin: string;
  headers: Record<string, string>;
  plainBody: string;
  streamBody: string;
  /** Calls per second. */
  rate: number;
  /** Share of the calls that stream, in [0, 1]. */
  streamShare: number;
  /** Keep-alive connections to the edge at most; calls beyond them wait in the pool's queue (and that wait counts). */
  connections: number;
  /** Calls allowed in flight; a due call beyond it is counted as `dropped`, not sent (a safety valve). */
  maxInFlight: number;
  timeoutMs: number;
}

export interface LoadWindow {
  seconds: number;
  started: number;
  completed: number;
  errors: number;
  dropped: number;
  in_flight_at_end: number;
  status_codes: Record<string, number>;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  plain: { completed: number; p50_ms: number | null; p99_ms: number | null };
  stream: { completed: number; p50_ms: number | null; p99_ms: number | null; ttft_p50_ms: number | null; ttft_p99_ms: number | null };
}

const TICK_MS = 5;

/** A failed call's bucket in status_codes: `network:<code>` (undici's or the socket's), so a soak says why. */
function networkFailure(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? `network:${code}` : 'network';
}
const sortedOf = (xs: number[]) => Float64Array.from(xs).sort();
const pct = (xs: Float64Array, p: number) => round(percentile(xs, p), 2);

export class OpenLoopLoad {
  private readonly pool: Pool;
  private readonly streamTarget: StreamTarget;
  private t0 = 0;
  private launched = 0;
  private inFlight = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlightDone = new Set<Promise<void>>();
  private window = OpenLoopLoad.emptyWindow();
  private windowStart = performance.now();

  constructor(private readonly o: OpenLoopOptions) {
    this.pool = new Pool(o.origin, { connections: o.connections, pipelining: 1 });
    const url = new URL('/v1/chat/completions', o.origin);
    this.streamTarget = { path: 'gateway', origin: o.origin, pathname: url.pathname, headers: o.headers, body: o.streamBody };
  }

  private static emptyWindow() {
    return { started: 0, errors: 0, dropped: 0, statusCodes: {} as Record<string, number>, plain: [] as number[], stream: [] as number[], ttft: [] as number[] };
  }

  start(): void {
    this.t0 = performance.now();
    this.windowStart = this.t0;
    this.timer = setInterval(() => this.launchDue(), TICK_MS);
  }

  /** Stops scheduling and waits for the calls in flight to finish (they are counted in the current window). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([...this.inFlightDone]);
    await this.pool.close();
  }

  /** Connections this load holds open to the edge now: the edge process holds one descriptor for each. */
  openConnections(): number {
    return this.pool.stats.connected;
  }

  takeWindow(): LoadWindow {
    const now = performance.now();
    const w = this.window;
    this.window = OpenLoopLoad.emptyWindow();
    const seconds = (now - this.windowStart) / 1000;
    this.windowStart = now;
    const all = sortedOf([...w.plain, ...w.stream]);
    const plain = sortedOf(w.plain);
    const stream = sortedOf(w.stream);
    const ttft = sortedOf(w.ttft);
    return {
      seconds: round(seconds, 2)!,
      started: w.started,
      completed: all.length,
      errors: w.errors,
      dropped: w.dropped,
      in_flight_at_end: this.inFlight,
      status_codes: w.statusCodes,
      p50_ms: pct(all, 50),
      p99_ms: pct(all, 99),
      max_ms: all.length ? round(all[all.length - 1], 2) : null,
      plain: { completed: plain.length, p50_ms: pct(plain, 50), p99_ms: pct(plain, 99) },
      stream: { completed: stream.length, p50_ms: pct(stream, 50), p99_ms: pct(stream, 99), ttft_p50_ms: pct(ttft, 50), ttft_p99_ms: pct(ttft, 99) },
    };
  }

  private launchDue(): void {
    const due = Math.floor(((performance.now() - this.t0) / 1000) * this.o.rate);
    while (this.launched < due) {
      const i = this.launched++;
      const scheduledAt = this.t0 + (i * 1000) / this.o.rate;
      if (this.inFlight >= this.o.maxInFlight) {
        this.window.dropped++;
        continue;
      }
      // Spread the streaming calls evenly: call i streams when the running share crosses a whole number.
      const stream = Math.floor((i + 1) * this.o.streamShare) > Math.floor(i * this.o.streamShare);
      this.window.started++;
      this.inFlight++;
      const done = (stream ? this.streamCall(scheduledAt) : this.plainCall(scheduledAt))
        .catch((err: unknown) => { this.window.errors++; this.count(networkFailure(err)); })
        .finally(() => { this.inFlight--; this.inFlightDone.delete(done); });
      this.inFlightDone.add(done);
    }
  }

  private count(status: number | string): void {
    this.window.statusCodes[status] = (this.window.statusCodes[status] ?? 0) + 1;
  }

  private async plainCall(scheduledAt: number): Promise<void> {
    const res = await this.pool.request({
      path: '/v1/chat/completions', method: 'POST', headers: this.o.headers, body: this.o.plainBody,
      headersTimeout: this.o.timeoutMs, bodyTimeout: this.o.timeoutMs,
    });
    await res.body.dump();
    this.count(res.statusCode);
    if (res.statusCode === 200) this.window.plain.push(performance.now() - scheduledAt);
    else this.window.errors++;
  }

  private async streamCall(scheduledAt: number): Promise<void> {
    const lagMs = performance.now() - scheduledAt;
    const r = await timedStream(this.pool, this.streamTarget);
    this.count(r.status);
    if ('failed' in r) {
      this.window.errors++;
      return;
    }
    this.window.stream.push(lagMs + r.total);
    this.window.ttft.push(lagMs + r.ttft);
  }
}
