import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, createLogger } from '@gw/platform';
import { createStore, type Store } from '@gw/store';
import { MAX_RECORDED_BYTES, RECORDED_CALLS_COLLECTION, RecordedCalls, type Admission, type RecordedResponse } from './recorded-calls';

const ENGINES = process.env.MONGO_URL ? ['embedded', 'mongo'] as const : ['embedded'] as const;
const LEASE_MS = 30_000;
const RETENTION_MS = 60 * 60_000;
const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 };
const cost = { priced: true, list_micros: 13, charged_micros: 13 };
const unary = (text: string): RecordedResponse => ({ method: 'unary', completion_json: JSON.stringify({ text }), usage, cost });
const claimOf = (a: Admission) => {
  if (a.kind !== 'run') throw new Error('expected to run the call');
  return a.claim;
};

describe.each(ENGINES)('RecordedCalls on the %s store', (engine) => {
  let dir: string;
  let store: Store;
  let now: number;
  let calls: RecordedCalls;
  let seq = 0;
  const id = () => `br-00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-recorded-calls-'));
    if (engine === 'mongo') {
      const url = new URL(process.env.MONGO_URL!);
      url.pathname = `/recorded_calls_test_${process.pid}_${Date.now().toString(36)}`;
      store = createStore({ engine: 'mongo', url: url.toString() });
    } else {
      store = createStore({ engine: 'embedded', dataDir: dir });
    }
  });
  beforeEach(async () => {
    await store.collection(RECORDED_CALLS_COLLECTION).deleteMany({});
    now = Date.parse('2026-11-24T08:00:00Z');
    calls = new RecordedCalls({ store, logger: createLogger('recorded-calls-test', 'silent'), leaseMs: LEASE_MS, retentionMs: RETENTION_MS, sweepMs: 60_000, now: () => now });
    await calls.ensureIndexes();
  });
  afterEach(() => calls.stop());
  afterAll(async () => {
    await store.collection(RECORDED_CALLS_COLLECTION).deleteMany({});
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the first call with an id and replays its response to every retry', async () => {
    const requestId = id();
    await claimOf(await calls.admit(requestId, 'acct_a', 'unary')).complete(unary('first'));
    expect(await calls.admit(requestId, 'acct_a', 'unary')).toEqual({ kind: 'replay', response: unary('first') });
    expect(await calls.admit(requestId, 'acct_a', 'unary')).toEqual({ kind: 'replay', response: unary('first') });
  });

  it('refuses a retry while the call runs elsewhere, and lets one take over once that claim lapsed', async () => {
    const requestId = id();
    const stale = claimOf(await calls.admit(requestId, 'acct_a', 'unary'));
    await expect(calls.admit(requestId, 'acct_a', 'unary')).rejects.toMatchObject({ code: 'request_in_progress' });
    now += LEASE_MS + 1;
    const current = claimOf(await calls.admit(requestId, 'acct_a', 'unary'));
    // The instance that lost its claim finishes late: its answer is not the one recorded.
    await stale.complete(unary('late'));
    await expect(calls.admit(requestId, 'acct_a', 'unary')).rejects.toMatchObject({ code: 'request_in_progress' });
    await current.complete(unary('current'));
    expect(await calls.admit(requestId, 'acct_a', 'unary')).toEqual({ kind: 'replay', response: unary('current') });
  });

  it('frees the id of a call that failed, so a retry runs it at once', async () => {
    const requestId = id();
    await claimOf(await calls.admit(requestId, 'acct_a', 'unary')).abandon();
    expect((await calls.admit(requestId, 'acct_a', 'unary')).kind).toBe('run');
  });

  it('keeps an id to the account and the method that used it', async () => {
    const requestId = id();
    await claimOf(await calls.admit(requestId, 'acct_a', 'unary')).complete(unary('mine'));
    await expect(calls.admit(requestId, 'acct_b', 'unary')).rejects.toMatchObject({ code: 'request_id_conflict' });
    await expect(calls.admit(requestId, 'acct_a', 'stream')).rejects.toBeInstanceOf(ConflictError);
  });

  it('a stream that ended early was billed for what it generated: its id cannot run again', async () => {
    const requestId = id();
    await claimOf(await calls.admit(requestId, 'acct_a', 'stream')).complete({ method: 'stream', chunks: [], usage, cost, ended_early: true });
    await expect(calls.admit(requestId, 'acct_a', 'stream')).rejects.toMatchObject({ code: 'request_id_spent' });
  });

  it('does not keep a response larger than the bound: a retry runs the call again', async () => {
    const requestId = id();
    await claimOf(await calls.admit(requestId, 'acct_a', 'unary')).complete(unary('x'.repeat(MAX_RECORDED_BYTES)));
    expect((await calls.admit(requestId, 'acct_a', 'unary')).kind).toBe('run');
  });

  it('deletes recorded responses past their retention, and only those', async () => {
    const old = id();
    await claimOf(await calls.admit(old, 'acct_a', 'unary')).complete(unary('old'));
    now += RETENTION_MS / 2;
    const recent = id();
    await claimOf(await calls.admit(recent, 'acct_a', 'unary')).complete(unary('recent'));
    now += RETENTION_MS / 2 + 1;
    expect(await calls.sweep()).toBe(1);
    expect((await calls.admit(old, 'acct_a', 'unary')).kind).toBe('run');
    expect((await calls.admit(recent, 'acct_a', 'unary')).kind).toBe('replay');
  });
});
