import { createLogger, PaymentRequiredError, UpstreamError, type Identity } from '@gw/platform';
import { BilledCalls, untilFlushed, type BilledCallRecord, type FailedCallRecord, type RouteRef } from './billed-call';
import { callFailedEvent } from './call-failed-event';

/**
 * The lifecycle on recording ports: the ports are this package's boundary (each service binds them to its
 * spend holds, router and usage recorder), so what crosses them is the behaviour under test.
 */
type Route = RouteRef & { fails: boolean };
interface Usage { tokens: number }
interface Plan { routes: Route[] }

const identity: Identity = { accountId: 'acct_1', keyHash: 'kh_1', isManagement: false, keyLimitMicros: null, keyLimitReset: null };
const route = (id: string, fails = false): Route => ({ providerName: `p-${id}`, deployment: { id }, fails });

function harness(opts: { refuse?: boolean; durable?: () => Promise<void>; journaled?: () => Promise<void> } = {}) {
  const log: string[] = [];
  const records: Array<BilledCallRecord<Route, 'images', Usage>> = [];
  const failures: Array<FailedCallRecord<Route, 'images'>> = [];
  const calls = new BilledCalls<Route, 'images', Usage, Plan>({
    holds: {
      reserve: async (_id, requestId) => {
        if (opts.refuse) throw new PaymentRequiredError();
        log.push(`reserve ${requestId}`);
        return { holdId: requestId, micros: 1, grant: false };
      },
      release: (_id, hold) => { log.push(`release ${hold.holdId}`); },
    },
    router: {
      attempt: async (plan, send) => {
        let last: unknown = new Error('no route');
        for (const r of plan.routes) {
          try {
            return { result: await send(r), route: r };
          } catch (err) {
            last = err;
          }
        }
        throw last;
      },
    },
    usage: {
      record: (call) => { records.push(call); log.push(`record ${call.requestId}`); return opts.durable?.(); },
      failed: (call) => { failures.push(call); log.push(`failed ${call.requestId}`); },
      openStream: (start) => {
        log.push(`journal ${start.apiType} ${start.promptChars}`);
        return {
          sendingTo: async (_provider, deployment) => { log.push(`sending ${deployment}`); await opts.journaled?.(); log.push(`journaled ${deployment}`); },
          noteOutput: (chars) => { log.push(`output ${chars}`); },
          discard: () => { log.push('discard'); },
          close: () => { log.push('close'); },
        };
      },
    },
    logger: createLogger('billed-call-test', 'silent'),
  });
  return { calls, log, records, failures };
}

const spec = (routes: Route[], requestId?: string) => ({ apiType: 'images' as const, identity, traceId: 't', model: 'm', plan: { routes }, requestId });
const send = async (r: Route) => {
  if (r.fails) throw new UpstreamError('down');
  return { id: `resp-${r.deployment.id}`, tokens: 7 };
};

describe('BilledCalls.call', () => {
  it('holds before the provider is called, falls back, and bills the deployment that answered once', async () => {
    const { calls, log, records } = harness();
    const { requestId, result } = await calls.call({
      ...spec([route('a', true), route('b')]), send,
      usageOf: (res) => ({ usage: { tokens: res.tokens }, providerResponseId: res.id, servedModel: 'served', finishReason: 'stop' }),
    });
    expect(requestId).toMatch(/^br-[0-9a-f-]{36}$/);
    expect(result.id).toBe('resp-b');
    expect(log).toEqual([`reserve ${requestId}`, `record ${requestId}`]);
    expect(records).toEqual([expect.objectContaining({
      requestId, apiType: 'images', model: 'm', route: expect.objectContaining({ deployment: { id: 'b' } }), usage: { tokens: 7 },
      providerResponseId: 'resp-b', streamed: false, cancelled: false, finishReason: 'stop',
    })]);
  });

  it('bills under an id made earlier (an async job re-run)', async () => {
    const { calls, records } = harness();
    const { requestId } = await calls.call({ ...spec([route('a')], 'br-job'), send, usageOf: () => ({ usage: null, providerResponseId: '', servedModel: '', finishReason: '' }) });
    expect(requestId).toBe('br-job');
    expect(records.map((r) => [r.requestId, r.usage])).toEqual([['br-job', null]]);
  });

  it('a failure before the provider answered releases the hold, bills nothing, and is reported once with the route tried last', async () => {
    const { calls, log, records, failures } = harness();
    await expect(calls.call({ ...spec([route('a', true), route('b', true)]), send, usageOf: () => { throw new Error('not reached'); } })).rejects.toThrow('down');
    expect(log).toEqual([expect.stringMatching(/^reserve br-/), expect.stringMatching(/^release br-/), expect.stringMatching(/^failed br-/)]);
    expect(records).toEqual([]);
    expect(failures).toEqual([expect.objectContaining({
      model: 'm', apiType: 'images', route: expect.objectContaining({ providerName: 'p-b' }), errorKind: 'upstream_error', status: 502, clientError: false, streamed: false,
    })]);
    expect(callFailedEvent(failures[0], failures[0].startedAt + 40)).toEqual({
      request_id: failures[0].requestId, account_id: 'acct_1', key_hash: 'kh_1', model: 'm', provider: 'p-b', api_type: 'images',
      error_kind: 'upstream_error', status: 502, client_error: false, streamed: false, latency_ms: 40, created_at_ms: failures[0].startedAt, trace_id: 't',
    });
  });

  it('answers only once its usage event is durable, so a process killed right after answering has not lost the charge', async () => {
    let durable!: () => void;
    const { calls } = harness({ durable: () => new Promise<void>((resolve) => { durable = resolve; }) });
    let answered = false;
    const call = calls.call({ ...spec([route('a')]), send, usageOf: () => ({ usage: { tokens: 1 }, providerResponseId: 'r', servedModel: 's', finishReason: 'stop' }) })
      .then(() => { answered = true; });
    await new Promise((r) => setTimeout(r, 20));
    expect(answered).toBe(false);
    durable();
    await call;
    expect(answered).toBe(true);
  });

  it('an event the publisher has not yet made durable (it keeps and retries it) still answers', async () => {
    const { calls, records } = harness({ durable: () => Promise.reject(new Error('outbox unavailable')) });
    const { result } = await calls.call({ ...spec([route('a')]), send, usageOf: () => ({ usage: { tokens: 1 }, providerResponseId: 'r', servedModel: 's', finishReason: 'stop' }) });
    expect(result.id).toBe('resp-a');
    expect(records).toHaveLength(1);
  });

  it("a refused hold calls no provider, releases nothing, and is reported as the caller's failure", async () => {
    const { calls, log, failures } = harness({ refuse: true });
    let sent = false;
    await expect(calls.call({ ...spec([route('a')]), send: async () => { sent = true; }, usageOf: () => ({ usage: null, providerResponseId: '', servedModel: '', finishReason: '' }) }))
      .rejects.toBeInstanceOf(PaymentRequiredError);
    expect(sent).toBe(false);
    expect(log).toEqual([expect.stringMatching(/^failed br-/)]);
    expect(failures).toEqual([expect.objectContaining({ route: null, errorKind: 'insufficient_balance', status: 402, clientError: true })]);
  });
});

describe('BilledCalls.stream', () => {
  const streamSpec = (routes: Route[]) => {
    let produced = 0;
    return {
      ...spec(routes),
      promptChars: 11,
      open: async (r: Route) => {
        if (r.fails) throw new UpstreamError('down');
        return { parts: ['ab', 'cde', 'f'] };
      },
      items: async function* (s: { parts: string[] }) { for (const p of s.parts) { produced += p.length; yield p; } },
      progress: (item: string) => ({ chars: item.length, providerResponseId: 'r1', servedModel: 'sm' }),
      usageOf: () => ({ usage: { tokens: produced }, providerResponseId: 'r1', servedModel: 'sm', finishReason: '' }),
    };
  };

  it('journals before each attempt, checkpoints output, and finishes exactly once', async () => {
    const { calls, log, records } = harness();
    const s = await calls.stream(streamSpec([route('a', true), route('b')]));
    for await (const _ of s.items) { /* the client reads everything */ }
    s.finish({ cancelled: false });
    s.finish({ cancelled: true });
    expect(log).toEqual([
      `reserve ${s.requestId}`, 'journal images 11', 'sending a', 'journaled a', 'sending b', 'journaled b', 'output 2', 'output 3', 'output 1', `record ${s.requestId}`, 'close',
    ]);
    expect(records).toEqual([expect.objectContaining({ streamed: true, cancelled: false, usage: { tokens: 6 }, route: expect.objectContaining({ deployment: { id: 'b' } }) })]);
  });

  it('asks the provider while its journal entry is written, and hands the stream on only once the entry is durable', async () => {
    let durable!: () => void;
    const { calls, log } = harness({ journaled: () => new Promise<void>((resolve) => { durable = resolve; }) });
    const base = streamSpec([route('a')]);
    let handedOn = false;
    const opening = calls.stream({ ...base, open: async (r: Route) => { log.push('provider asked'); return base.open(r); } }).then((s) => { handedOn = true; return s; });
    await new Promise((r) => setTimeout(r, 20));
    // The provider was asked without waiting for the journal's commit, but nothing went on to the client.
    expect(log.slice(1)).toEqual(['journal images 11', 'sending a', 'provider asked']);
    expect(handedOn).toBe(false);
    durable();
    const s = await opening;
    expect(log.slice(1)).toEqual(['journal images 11', 'sending a', 'provider asked', 'journaled a']);
    for await (const _ of s.items) { /* the client reads everything */ }
    s.finish({ cancelled: false });
  });

  it('a stream whose client left still bills what was generated, marked cancelled', async () => {
    const { calls, records } = harness();
    const s = await calls.stream(streamSpec([route('a')]));
    for await (const _ of s.items) break;
    s.finish({ cancelled: true });
    expect(records).toEqual([expect.objectContaining({ requestId: s.requestId, cancelled: true, failed: false, usage: { tokens: 2 } })]);
  });

  it('a stream that broke after its first byte bills what was generated, marked failed, and reports no second failure', async () => {
    const { calls, records, failures } = harness();
    const s = await calls.stream(streamSpec([route('a')]));
    for await (const _ of s.items) break;
    s.finish({ cancelled: false, failed: true });
    expect(records).toEqual([expect.objectContaining({ requestId: s.requestId, cancelled: false, failed: true, usage: { tokens: 2 } })]);
    expect(failures).toEqual([]);
  });

  it('a stream no route opened releases its hold, discards its journal entry, bills nothing and is reported', async () => {
    const { calls, log, records, failures } = harness();
    await expect(calls.stream(streamSpec([route('a', true)]))).rejects.toThrow('down');
    expect(log).toEqual([expect.stringMatching(/^reserve /), 'journal images 11', 'sending a', 'journaled a', expect.stringMatching(/^release /), expect.stringMatching(/^failed /), 'discard']);
    expect(records).toEqual([]);
    expect(failures).toEqual([expect.objectContaining({ streamed: true, errorKind: 'upstream_error', route: expect.objectContaining({ providerName: 'p-a' }) })]);
  });
});

describe('untilFlushed', () => {
  it('resolves when the publisher\'s flush does', async () => {
    let flushed!: () => void;
    let done = false;
    const waiting = untilFlushed({ flush: () => new Promise<void>((resolve) => { flushed = resolve; }) }, 10_000).then(() => { done = true; });
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    flushed();
    await waiting;
    expect(done).toBe(true);
  });

  it('gives up waiting after its bound, and never rejects', async () => {
    const started = Date.now();
    await untilFlushed({ flush: () => new Promise<void>(() => undefined) }, 50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    await expect(untilFlushed({ flush: () => Promise.reject(new Error('refused')) }, 10_000)).resolves.toBeUndefined();
  });
});
