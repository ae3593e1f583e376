import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { startSimulators, type RunningSimulator } from '@gw/simulators';
import { startStack, type TestStack } from '../test-e2e/harness/stack';
import { boundedPost, burst, outcomeOf, tally, type CallResult, type StreamFormat } from './harness/calls';
import { FAULT_FIXTURES, SHORT_DEADLINE_MS, SLOW_FIRST_BYTE_MS, writeFaultCatalog } from './harness/fault-catalog';
import { reportFigures, type Figures } from './harness/figures';

jest.setTimeout(170_000);

/** No call may take longer: past it the drill counts a hang. */
const CALL_DEADLINE_MS = 30_000;
const CONCURRENCY = 4;

/**
 * Provider faults (issue #12) on the multi-process stack: bursts of upstream 503, 429 with Retry-After,
 * timeouts, slow first bytes, streams dropped midway and malformed JSON, from simulators in this process
 * (so their request counts are the upstream attempts). Retries and fallback as the README documents them
 * (a rate limit, 5xx or connection failure retried once, honouring Retry-After, then the next deployment;
 * a timeout falls back at once; nothing after the first streamed byte; three failures in a row cool a
 * deployment down for 30 s), streams ending with their format's error event (API-NOTES), no call past
 * its deadline, the cooldown on inference's /metrics.
 */
describe('provider faults', () => {
  let stack: TestStack;
  let faulty: RunningSimulator;
  let slow: RunningSimulator;
  let healthy: RunningSimulator;
  const figures: Figures = {};
  let catalogDir: string | undefined;

  beforeAll(async () => {
    [faulty, slow, healthy] = await Promise.all([
      startSimulators({ fixtures: FAULT_FIXTURES }),
      startSimulators({ latencyMs: SLOW_FIRST_BYTE_MS }),
      startSimulators(),
    ]);
    // Seven services starting on two busy cores: more than the e2e suite's patience.
    catalogDir = mkdtempSync(path.join(tmpdir(), 'gw-drill-catalog-'));
    stack = await startStack('processes', { env: { CATALOG_FILE: writeFaultCatalog(catalogDir, { faulty, slow, healthy }) }, readyTimeoutMs: 150_000 });
  }, 180_000);

  afterAll(async () => {
    reportFigures('provider-faults', figures);
    await stack?.stop();
    await Promise.all([faulty, slow, healthy].map((s) => s?.close()));
    if (catalogDir) rmSync(catalogDir, { recursive: true, force: true });
  }, 60_000);

  const body = (model: string, stream: boolean) => ({ model, stream, max_tokens: 32, messages: [{ role: 'user', content: `drill ${model}` }] });
  const chat = (model: string, stream = false) => boundedPost(stack.baseURL, stack.key, '/chat/completions', body(model, stream), CALL_DEADLINE_MS);

  /** Runs a burst, counting what each simulator received meanwhile; records the kind's figures. */
  async function faultBurst(kind: string, n: number, concurrency: number, call: () => Promise<CallResult>, stream: StreamFormat | null, upstream: RunningSimulator) {
    const [upstreamBefore, fallbackBefore] = [upstream.requests, healthy.requests];
    const results = await burst(n, concurrency, call);
    const outcomes = tally(results.map((r) => outcomeOf(r, stream)));
    const kindFigures = {
      calls: n,
      upstreamAttempts: upstream.requests - upstreamBefore,
      fallbackCalls: healthy.requests - fallbackBefore,
      maxMs: Math.round(Math.max(...results.map((r) => r.ms))),
      minMs: Math.round(Math.min(...results.map((r) => r.ms))),
    };
    figures[`${kind}.outcomes`] = JSON.stringify(outcomes);
    for (const [k, v] of Object.entries(kindFigures)) figures[`${kind}.${k}`] = v;
    expect(results.filter((r) => r.status === 'hang' || r.ms > CALL_DEADLINE_MS)).toEqual([]);
    return { results, outcomes, ...kindFigures };
  }

  /** A family's values on inference's /metrics, by deployment. */
  async function byDeployment(name: string): Promise<Record<string, number>> {
    const text = await (await fetch(`${stack.internal.inferenceURL}/metrics`)).text();
    const values: Record<string, number> = {};
    for (const line of text.split('\n').filter((l) => l.startsWith(`${name}{`))) {
      const deployment = /deployment="([^"]+)"/.exec(line)?.[1];
      if (deployment) values[deployment] = (values[deployment] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return values;
  }

  test('503 burst: each call retried once, then served by the fallback; the deployment cools down and is skipped', async () => {
    const b = await faultBurst('503', 24, CONCURRENCY, () => chat('drill/503'), null, faulty);
    expect(b.outcomes).toEqual({ 200: 24 });
    expect(b.fallbackCalls).toBe(24);
    // Three failures in a row cool it: only the calls in flight by then reach it, each at most twice.
    expect(b.upstreamAttempts).toBeGreaterThanOrEqual(3);
    expect(b.upstreamAttempts).toBeLessThanOrEqual(2 * CONCURRENCY + 2);
    expect((await byDeployment('gw_deployment_cooling')).d503).toBe(1);
    expect((await byDeployment('gw_upstream_retries_total')).d503).toBeGreaterThanOrEqual(1);

    const cooled = await faultBurst('503-cooling', 6, 1, () => chat('drill/503'), null, faulty);
    expect(cooled.upstreamAttempts).toBe(0);
    expect(cooled.outcomes).toEqual({ 200: 6 });

    const alone = await faultBurst('503-alone', 4, 2, () => chat('drill/503-alone'), null, faulty);
    expect(alone.outcomes).toEqual({ '502 upstream_error': 4 });
    // A deployment with no other to fall back to is tried even while cooling: once, and one retry.
    expect(alone.upstreamAttempts).toBe(8);
  });

  test('429 with Retry-After: the retry waits the second the provider asked for, then falls back', async () => {
    const b = await faultBurst('429', 12, CONCURRENCY, () => chat('drill/429'), null, faulty);
    expect(b.outcomes).toEqual({ 200: 12 });
    expect(b.maxMs).toBeGreaterThanOrEqual(1_000);
    expect(b.upstreamAttempts).toBeLessThanOrEqual(2 * CONCURRENCY + 2);
    expect((await byDeployment('gw_deployment_cooling')).d429).toBe(1);

    const alone = await faultBurst('429-alone', 3, 3, () => chat('drill/429-alone'), null, faulty);
    expect(alone.outcomes).toEqual({ '429 rate_limit_exceeded': 3 });
    expect(alone.upstreamAttempts).toBe(6);
    expect(alone.minMs).toBeGreaterThanOrEqual(1_000);
    expect(alone.results.map((r) => r.headers.get('retry-after'))).toEqual(['1', '1', '1']);
  });

  test('timeouts: the call falls back at once, never retrying the slow deployment', async () => {
    const b = await faultBurst('timeout', 12, CONCURRENCY, () => chat('drill/timeout'), null, slow);
    expect(b.outcomes).toEqual({ 200: 12 });
    expect(b.upstreamAttempts).toBeGreaterThanOrEqual(3);
    expect(b.upstreamAttempts).toBeLessThanOrEqual(CONCURRENCY + 2);
    expect((await byDeployment('gw_deployment_cooling')).dtimeout).toBe(1);
    expect((await byDeployment('gw_upstream_retries_total')).dtimeout ?? 0).toBe(0);

    const alone = await faultBurst('timeout-alone', 3, 3, () => chat('drill/timeout-alone'), null, slow);
    expect(alone.outcomes).toEqual({ '504 timeout': 3 });
    expect(alone.upstreamAttempts).toBe(3);
    expect(alone.maxMs).toBeLessThan(SLOW_FIRST_BYTE_MS + 5 * SHORT_DEADLINE_MS);
  });

  test('slow first byte within the deadline: streams wait for it and finish, with no retry and no fallback', async () => {
    const b = await faultBurst('slow-first-byte', 8, CONCURRENCY, () => chat('drill/slow-first-byte', true), 'chat', slow);
    expect(b.outcomes).toEqual({ '200 done': 8 });
    expect(b.minMs).toBeGreaterThanOrEqual(SLOW_FIRST_BYTE_MS);
    expect(b.upstreamAttempts).toBe(8);
    expect(b.fallbackCalls).toBe(0);
    expect((await byDeployment('gw_deployment_cooling')).dslow).toBe(0);
  });

  test('a stream dropped midway ends with its format\'s error event, never retried nor moved after its first byte', async () => {
    const b = await faultBurst('stream-drop', 8, CONCURRENCY, () => chat('drill/stream-drop', true), 'chat', faulty);
    expect(Object.keys(b.outcomes)).toHaveLength(1);
    expect(Object.keys(b.outcomes)[0]).toMatch(/^200 error-event /);
    expect(b.upstreamAttempts).toBe(8);
    expect(b.fallbackCalls).toBe(0);
    expect(b.results.every((r) => r.text.includes('half an ans'))).toBe(true);

    const native = (path: string, nativeBody: object) => boundedPost(stack.baseURL, stack.key, path, { model: 'drill/native-drop', stream: true, ...nativeBody }, CALL_DEADLINE_MS);
    const messages = await faultBurst('stream-drop-messages', 4, CONCURRENCY,
      () => native('/messages', { max_tokens: 32, messages: [{ role: 'user', content: 'drill' }] }), 'messages', faulty);
    expect(Object.keys(messages.outcomes)).toEqual([expect.stringMatching(/^200 error-event /)]);
    const responses = await faultBurst('stream-drop-responses', 4, CONCURRENCY, () => native('/responses', { input: 'drill' }), 'responses', faulty);
    expect(Object.keys(responses.outcomes)).toEqual([expect.stringMatching(/^200 error-event /)]);
  });

  test('malformed upstream JSON: a 502 in the envelope (a stream: its error event), neither retried nor moved', async () => {
    const b = await faultBurst('malformed-json', 8, CONCURRENCY, () => chat('drill/malformed'), null, faulty);
    expect(b.outcomes).toEqual({ '502 upstream_error': 8 });
    expect(b.upstreamAttempts).toBe(8);
    expect(b.fallbackCalls).toBe(0);

    const s = await faultBurst('malformed-stream', 4, CONCURRENCY, () => chat('drill/malformed-stream', true), 'chat', faulty);
    expect(s.outcomes).toEqual({ '200 error-event upstream_error': 4 });
    expect(s.upstreamAttempts).toBe(4);
    expect(s.fallbackCalls).toBe(0);
  });

  test('the cooldowns are on /metrics: the failing deployments cooling, the healthy ones not', async () => {
    const cooling = await byDeployment('gw_deployment_cooling');
    for (const [d, v] of Object.entries(cooling)) figures[`cooling.${d}`] = v;
    // Inference's own count of retries and fallbacks, beside the attempts the simulators saw.
    for (const [d, v] of Object.entries(await byDeployment('gw_upstream_retries_total'))) figures[`retries.${d}`] = v;
    for (const [d, v] of Object.entries(await byDeployment('gw_upstream_fallbacks_total'))) figures[`fallbacks.${d}`] = v;
    expect(cooling).toMatchObject({ d503: 1, d429: 1, dtimeout: 1, 'd503-fallback': 0, dslow: 0, ddrop: 0 });
  });
});
