/**
 * The streaming half of the run: `stream: true` chat, direct vs gateway (and the bare pass-through, the
 * floor, when given), at each connection count (ABBA across rounds), with the check that every answered
 * gateway stream was billed once after billing caught up.
 */
import { checkBilling, settledBalance, type BillingCheck } from './billing';
import { round, settle } from './stats';
import { oneStream, streamLoad, summarizeStreams, type StreamRow, type StreamSegment, type StreamTarget } from './stream-load';

export interface StreamRatio {
  connections: number;
  streams_per_s_ratio: number | null;
  ttft_p50_delta_ms: number | null;
  ttft_p99_delta_ms: number | null;
  total_p50_delta_ms: number | null;
  total_p99_delta_ms: number | null;
  /** What the bare pass-through adds to the direct TTFT p50: the floor under the gateway's figure. */
  passthrough_ttft_p50_delta_ms: number | null;
}

export interface StreamPhase {
  rows: StreamRow[];
  ratios: StreamRatio[];
  billing: BillingCheck;
}

interface StreamPhaseInput {
  targets: { direct: StreamTarget; gateway: StreamTarget; passthrough?: StreamTarget };
  connections: number[];
  durationS: number;
  warmupS: number;
  rounds: number;
  pids: Record<string, number | undefined>;
  readBalance: () => Promise<number>;
  warn: (line: string) => void;
}

type StreamPath = 'direct' | 'gateway' | 'passthrough';

const delta = (g: number | null, d: number | null) => (g !== null && d !== null ? round(g - d, 3) : null);

export async function runStreamPhase(o: StreamPhaseInput): Promise<StreamPhase> {
  const say = (s: string) => process.stdout.write(s);
  const paths: StreamPath[] = o.targets.passthrough ? ['direct', 'gateway', 'passthrough'] : ['direct', 'gateway'];
  const target = (p: StreamPath) => o.targets[p]!;
  for (const p of paths) {
    const r = await oneStream(target(p));
    if ('failed' in r) throw new Error(`${p} stream probe failed: HTTP ${r.status}`);
  }
  // What one stream costs: the balance's fall after that single probe on the gateway.
  // Read once the reachability probes above (and anything before them) have landed on the balance.
  const balanceStart = await settledBalance(o.readBalance, await o.readBalance(), 0);
  const probe = await oneStream(o.targets.gateway);
  if ('failed' in probe) throw new Error(`gateway stream probe failed: HTTP ${probe.status}`);
  const afterProbe = await settledBalance(o.readBalance, balanceStart, 1);
  const perStreamMicros = balanceStart - afterProbe;
  if (perStreamMicros <= 0) throw new Error('a gateway stream was not billed (the balance did not fall after the probe)');

  let answered = 0;
  let unanswered = 0;
  const check = (label: string, s: StreamSegment) => {
    if (s.failed > 0) o.warn(`WARNING: ${label}: ${s.failed} failed streams (${JSON.stringify(s.statusCodes)})`);
  };
  const run = async (p: StreamPath, c: number, seconds: number) => {
    await settle(o.pids.gateway);
    const s = await streamLoad(target(p), c, seconds, o.pids);
    if (p === 'gateway') { answered += s.completed; unanswered += s.failed; }
    return s;
  };
  const maxConn = Math.max(...o.connections);
  if (o.warmupS > 0) {
    for (const p of paths) {
      say(`stream warm-up: ${p}, ${maxConn} connections, ${o.warmupS} s\n`);
      check(`stream warm-up ${p}`, await run(p, maxConn, o.warmupS));
    }
  }
  const segments = new Map<string, StreamSegment[]>();
  for (let r = 0; r < o.rounds; r++) {
    for (const c of o.connections) {
      for (const p of r % 2 === 0 ? paths : [...paths].reverse()) {
        say(`stream round ${r + 1}/${o.rounds}: ${p}, ${c} connections, ${o.durationS} s ... `);
        const s = await run(p, c, o.durationS);
        say(`${Math.round(s.completed / s.durationS)} streams/s\n`);
        check(`stream ${p} x${c} round ${r + 1}`, s);
        segments.set(`${c}:${p}`, [...(segments.get(`${c}:${p}`) ?? []), s]);
      }
    }
  }

  const balanceEnd = await settledBalance(o.readBalance, afterProbe, answered * perStreamMicros);
  const billing = checkBilling(afterProbe, balanceEnd, perStreamMicros, answered, unanswered);
  if (!billing.ok) o.warn(`WARNING: streams billed ${billing.billed_usd} USD = ${billing.calls_billed} streams, expected ${answered} to ${answered + unanswered} at ${perStreamMicros} micro-USD each`);

  const rows: StreamRow[] = [];
  const ratios: StreamRatio[] = [];
  for (const c of o.connections) {
    const d = summarizeStreams(c, 'direct', segments.get(`${c}:direct`) ?? []);
    const g = summarizeStreams(c, 'gateway', segments.get(`${c}:gateway`) ?? []);
    const f = o.targets.passthrough ? summarizeStreams(c, 'passthrough', segments.get(`${c}:passthrough`) ?? []) : null;
    rows.push(d, g, ...(f ? [f] : []));
    ratios.push({
      connections: c,
      streams_per_s_ratio: d.streams_per_s && g.streams_per_s !== null ? round(g.streams_per_s / d.streams_per_s, 3) : null,
      ttft_p50_delta_ms: delta(g.ttft_p50_ms, d.ttft_p50_ms),
      ttft_p99_delta_ms: delta(g.ttft_p99_ms, d.ttft_p99_ms),
      total_p50_delta_ms: delta(g.total_p50_ms, d.total_p50_ms),
      total_p99_delta_ms: delta(g.total_p99_ms, d.total_p99_ms),
      passthrough_ttft_p50_delta_ms: f ? delta(f.ttft_p50_ms, d.ttft_p50_ms) : null,
    });
  }
  return { rows, ratios, billing };
}
