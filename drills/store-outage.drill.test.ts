import { usdToMicros } from '@gw/platform';
import { api, spendableMicros, type ApiResponse } from '../test-e2e/harness/api';
import { E2E_MODEL } from '../test-e2e/harness/catalog';
import { waitFor } from '../test-e2e/harness/ports';
import { startStack, type ServiceName, type TestStack } from '../test-e2e/harness/stack';
import { errorsByCode, isErrorEnvelope, startChatLoad, tally } from './harness/chat-load';
import { drillEngines } from './harness/engines';
import { reportFigures } from './harness/figures';

/**
 * Store outage (issue #12): the MongoDB-wire server frozen for 10 s (SIGSTOP: connections stay open, nothing
 * answers) under a light load. Readiness says which instances can still serve, calls that need the store are
 * refused with a 503 in the envelope well before the thaw, nothing is half-written, and service resumes by
 * itself once the server answers again.
 */
jest.setTimeout(170_000);

const FREEZE_MS = 10_000;
/** Shorter than the freeze: a call that waits for the thaw instead of failing is a hang. */
const DEADLINE_MS = 8_000;
const SERVICES: ServiceName[] = ['edge', 'keys', 'billing', 'inference', 'batch', 'webhooks', 'media'];
const BODY = { model: E2E_MODEL, messages: [{ role: 'user', content: 'a call while the store may be frozen' }], max_completion_tokens: 50 };

interface Probe { what: string; res: ApiResponse | null; error: string | null; durationMs: number }

/** One request with the drill's deadline, timed; a timeout is recorded, never thrown. */
async function probe(what: string, run: () => Promise<ApiResponse>): Promise<Probe> {
  const startedAt = Date.now();
  try {
    const res = await Promise.race([run(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS))]);
    return { what, res, error: null, durationMs: Date.now() - startedAt };
  } catch (err) {
    return { what, res: null, error: (err as Error).message, durationMs: Date.now() - startedAt };
  }
}

/** Key management answers errors in its own plain JSON (the spec: no envelope there), `{error: {code, message, param}}`. */
const isPlainKeysError = (body: unknown, status: number) => {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return e?.code === status && typeof e.message === 'string' && 'param' in e;
};

/** Answered, or refused with a 503 in the route's error shape. */
const answeredOrUnavailable = (p: Probe, ok: number, plain = false) => p.res !== null
  && (p.res.status === ok || (p.res.status === 503 && (plain ? isPlainKeysError(p.res.body, 503) : isErrorEnvelope(p.res.body, 503))));

describe('store outage under a light load', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // The edge's own key cache lifetime (the e2e stacks shorten it to 1 s to exercise its stale window).
    stack = await startStack('processes', { env: { AUTH_CACHE_TTL_MS: '30000' } });
  }, 120_000);
  afterAll(async () => {
    drillEngines.thaw('mongo');
    await stack?.stop();
  }, 30_000);

  test('calls needing the store are refused with 503 while it is frozen, nothing is half-written, and service resumes by itself', async () => {
    const balanceBefore = await spendableMicros(stack.baseURL, stack.key);
    const startedAt = Date.now();
    let phase = 'before';
    const load = startChatLoad({
      baseURL: stack.baseURL, deadlineMs: DEADLINE_MS, phase: () => phase, body: BODY,
      clients: [
        { name: 'json', key: stack.key, stream: 'never', pauseMs: 200 },
        { name: 'stream', key: stack.key, stream: 'always', pauseMs: 200 },
      ],
    });
    await new Promise((r) => setTimeout(r, 2_000));

    drillEngines.freeze('mongo');
    phase = 'frozen';
    const frozenAt = Date.now();
    // Writes and reads that need the store, sent while it is frozen.
    const duringFreeze = await Promise.all([
      probe('create key', () => api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name: 'created during the freeze', limit: 1 } })),
      probe('balance', () => api(stack.baseURL, 'GET', '/billing/balance', { key: stack.key })),
      probe('models', () => api(stack.baseURL, 'GET', '/models')),
    ]);
    // Readiness once the freeze has lasted past the readiness checks' own timeouts.
    await new Promise((r) => setTimeout(r, Math.max(0, frozenAt + 4_000 - Date.now())));
    const readiness = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await stack.processes!.readiness(s)] as const)));
    await new Promise((r) => setTimeout(r, Math.max(0, frozenAt + FREEZE_MS - Date.now())));

    drillEngines.thaw('mongo');
    phase = 'thawed';
    const thawedAt = Date.now();
    // Calls of the drill's own (served ones are billed like the load's).
    const ownServed: string[] = [];
    const ownCall = async (key: string) => {
      const res = await api(stack.baseURL, 'POST', '/chat/completions', { key, body: BODY });
      if (res.status === 200) ownServed.push(res.headers.get('x-request-id')!);
      return res.status;
    };
    await waitFor('a chat call served after the thaw', async () => (await ownCall(stack.key)) === 200, 60_000);
    await waitFor('every service ready after the thaw', async () => (await Promise.all(SERVICES.map((s) => stack.processes!.readiness(s)))).every((r) => r.status === 200), 60_000);
    const recoveredMs = Date.now() - thawedAt;
    await new Promise((r) => setTimeout(r, 3_000));
    await load.stop();
    const outcomes = load.outcomes;

    // Every call answered or refused in the envelope, none past its deadline; what failed failed with 503.
    expect(outcomes.filter((o) => !o.served && !o.cleanFailure).map((o) => `${o.client} ${o.phase} ${o.status} ${o.error}`)).toEqual([]);
    expect(outcomes.filter((o) => o.cleanFailure).map((o) => o.status).filter((s) => s !== 503)).toEqual([]);
    const frozenCalls = outcomes.filter((o) => o.phase === 'frozen');
    expect(frozenCalls.filter((o) => o.status === 503).length).toBeGreaterThan(0);
    for (const p of duringFreeze) {
      const seen = { what: p.what, ok: answeredOrUnavailable(p, p.what === 'create key' ? 201 : 200, p.what === 'create key'), status: p.res?.status, body: p.res?.body, error: p.error };
      expect(seen).toEqual({ ...seen, ok: true, error: null });
    }
    // The catalogue needs no store: served throughout.
    expect(duringFreeze.find((p) => p.what === 'models')!.res!.status).toBe(200);

    // Readiness: every instance with a store says it cannot serve, naming the store; the edge names keys.
    for (const s of SERVICES.filter((x) => x !== 'edge')) {
      expect({ s, status: readiness[s].status, store: readiness[s].body.checks.store }).toEqual({ s, status: 503, store: false });
    }
    expect(readiness.edge.body.checks.keys).toBe(false);

    // Nothing half-written: the key asked for during the freeze is whole after the thaw (listed with its name
    // and limit, and authenticates), or absent.
    const created = duringFreeze[0].res!;
    const keys = (await api(stack.baseURL, 'GET', '/keys', { key: stack.key })).body.data as { name: string; limit: number | null; hash: string }[];
    const listed = keys.filter((k) => k.name === 'created during the freeze');
    if (created.status === 201) {
      expect(listed).toHaveLength(1);
      expect(await ownCall(created.body.key)).toBe(200);
    }
    expect(listed.every((k) => k.limit === 1)).toBe(true);
    expect(listed.length).toBeLessThanOrEqual(1);

    // Charges: every served call billed once, no refused call billed, the balance moved by exactly their sum.
    const served = [...outcomes.filter((o) => o.served).map((o) => o.requestId!), ...ownServed];
    const charged = new Map<string, number>();
    await waitFor('every served call billed', async () => {
      for (const id of served.filter((c) => !charged.has(c))) {
        const res = await api(stack.baseURL, 'GET', `/billing/requests/${id}`, { key: stack.key });
        if (res.status === 200) charged.set(id, usdToMicros(res.body.data.charged_cost));
      }
      return charged.size === served.length;
    }, 60_000);
    const refusedWithId = outcomes.filter((o) => !o.served && o.requestId);
    for (const o of refusedWithId) expect({ id: o.requestId, status: (await api(stack.baseURL, 'GET', `/billing/requests/${o.requestId}`, { key: stack.key })).status }).toEqual({ id: o.requestId, status: 404 });
    const sum = [...charged.values()].reduce((a, b) => a + b, 0);
    expect(balanceBefore - await spendableMicros(stack.baseURL, stack.key)).toBe(sum);

    const frozen = tally(frozenCalls);
    const all = tally(outcomes);
    expect(all.maxDurationMs).toBeLessThan(DEADLINE_MS);
    reportFigures('store-outage', {
      freeze_s: FREEZE_MS / 1000,
      readiness: JSON.stringify(Object.fromEntries(SERVICES.map((s) => [s, { status: readiness[s].status, down: Object.entries(readiness[s].body.checks).filter(([, up]) => !up).map(([n]) => n) }]))),
      calls: all.calls,
      served: all.served,
      frozen_calls: frozen.calls,
      frozen_served: frozen.served,
      frozen_refused_503: frozenCalls.filter((o) => o.status === 503).length,
      failures: JSON.stringify(errorsByCode(outcomes)),
      probes: JSON.stringify(duringFreeze.map((p) => ({ what: p.what, status: p.res?.status ?? p.error, ms: p.durationMs }))),
      max_call_ms: all.maxDurationMs,
      max_frozen_call_ms: frozen.maxDurationMs,
      recovered_ms: recoveredMs,
      billed: charged.size,
      charged_micros: sum,
      since_start_ms: Date.now() - startedAt,
    });
  });
});
