import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { TOPICS, type CallArchived } from '@gw/proto';
import { ledgerCollection } from '../ledger';
import { BILLING_TEST_SECRET, Engines, eventually, silentLogger, STORE_ENGINES, usageEvent } from '../test-harness';
import { archiveCollection, CallArchive } from './call-archive';

const DAY_MS = 24 * 60 * 60 * 1000;
let sequence = 0;

function record(overrides: Partial<CallArchived> = {}): CallArchived {
  sequence++;
  return {
    request_id: `br-00000000-0000-4000-9000-${String(sequence).padStart(12, '0')}`,
    account_id: 'acct_a', key_hash: 'aa'.repeat(32), api_type: 'chat', model: 'test/chat',
    provider_response_id: `chatcmpl-arch-${sequence}`, streamed: false, mode: 'full',
    request_json: JSON.stringify({ model: 'test/chat', messages: [{ role: 'user', content: 'hi' }] }),
    response_json: JSON.stringify({ id: `chatcmpl-arch-${sequence}`, choices: [{ message: { role: 'assistant', content: 'hello' } }] }),
    request_truncated: false, response_truncated: false, created_at_ms: Date.now(), trace_id: 'trace-1', unbilled: false,
    ...overrides,
  };
}

async function get(port: number, path: string, accountId = 'acct_a') {
  const identity = { accountId, keyHash: 'aa'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
  const token = new IdentitySigner(BILLING_TEST_SECRET, 'edge').mint({ method: 'GET', path }, identity, 'trace-archive-test');
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { [IDENTITY_HEADER]: token } });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (await res.json()) as any };
}

describe.each(STORE_ENGINES)('the call archive (%s store and blobs, records through the bus)', (engine) => {
  let engines: Engines;
  let service: RunningService;
  const plain = record();
  const slashed = record({ provider_response_id: 'projects/p1/operations/op-7', streamed: true, api_type: 'responses' });
  const metadataOnly = record({ mode: 'metadata', request_json: '', response_json: '' });
  const cut = record({ request_json: '{"model":"test/chat","messages":[{"role":"user","content":"aaaa', request_truncated: true });
  const others = record({ account_id: 'acct_other' });
  // A failed video: archived, never billed, so no ledger entry knows its provider id.
  const failedVideo = record({ api_type: 'video', provider_response_id: 'video-task-failed-1', unbilled: true });

  beforeAll(async () => {
    engines = await Engines.open(engine);
    service = await engines.startService({ seeds: [{ id: 'acct_a', wallet_usd: '1' }] });
    const all = [plain, slashed, metadataOnly, cut, others, failedVideo];
    await engines.bus.publish(TOPICS.archive, all.map((value) => ({ key: value.request_id, value })));
    // Delivered again: nothing changes.
    await engines.bus.publish(TOPICS.archive, [plain].map((value) => ({ key: value.request_id, value })));
    // The billed calls' usage: their provider ids are found through the ledger.
    const billed = [plain, slashed].map((r) => usageEvent({ request_id: r.request_id, provider_response_id: r.provider_response_id, api_type: r.api_type }));
    await engines.bus.publish(TOPICS.usage, billed.map((value) => ({ key: value.account_id, value })));
    await eventually('every record archived', async () => (await archiveCollection(engines.store).count({})) === all.length);
    await eventually('the usage billed', async () => (await ledgerCollection(engines.store).count({ state: 'applied' })) === billed.length);
  });

  afterAll(async () => {
    await service.stop();
    await engines.close();
  });

  test('by request_id: the bodies as JSON, with the metadata', async () => {
    const { status, body } = await get(service.httpPort, `/v1/billing/requests/${plain.request_id}/archive`);
    expect(status).toBe(200);
    expect(body.data).toEqual({
      request_id: plain.request_id, id: plain.provider_response_id, api_type: 'chat', model: 'test/chat', mode: 'full',
      request: JSON.parse(plain.request_json), response: JSON.parse(plain.response_json),
      streamed: false, truncated: false, created_at: new Date(plain.created_at_ms).toISOString(), trace_id: 'trace-1',
    });
  });

  test('by a provider id with slashes, raw or percent-encoded', async () => {
    for (const id of [slashed.provider_response_id, encodeURIComponent(slashed.provider_response_id)]) {
      const { status, body } = await get(service.httpPort, `/v1/billing/requests/${id}/archive`);
      expect(status).toBe(200);
      expect(body.data).toEqual(expect.objectContaining({ request_id: slashed.request_id, streamed: true, api_type: 'responses' }));
    }
  });

  test("by the provider id of a call that is never billed (a failed video)", async () => {
    const { status, body } = await get(service.httpPort, `/v1/billing/requests/${failedVideo.provider_response_id}/archive`);
    expect(status).toBe(200);
    expect(body.data).toEqual(expect.objectContaining({ request_id: failedVideo.request_id, id: failedVideo.provider_response_id, api_type: 'video' }));
  });

  test('metadata mode: the record without bodies; a cut body is its text, flagged truncated', async () => {
    const meta = await get(service.httpPort, `/v1/billing/requests/${metadataOnly.request_id}/archive`);
    expect(meta.body.data).toEqual(expect.objectContaining({ mode: 'metadata', request: null, response: null }));
    const truncated = await get(service.httpPort, `/v1/billing/requests/${cut.request_id}/archive`);
    expect(truncated.body.data).toEqual(expect.objectContaining({ truncated: true, request: cut.request_json, response: JSON.parse(cut.response_json) }));
  });

  test("another account's call, an unknown id and a call never archived: the same 404", async () => {
    const cases = [
      [others.request_id, 'acct_a'], [plain.request_id, 'acct_other'], [slashed.provider_response_id, 'acct_other'],
      [failedVideo.provider_response_id, 'acct_other'], ['br-never-archived', 'acct_a'],
    ];
    for (const [id, account] of cases) {
      const { status, body } = await get(service.httpPort, `/v1/billing/requests/${id}/archive`, account);
      expect(status).toBe(404);
      expect(body.error).toEqual(expect.objectContaining({ code: 'archive_not_found', param: 'request_id' }));
    }
  });

});

describe.each(STORE_ENGINES)('archive retention (%s store and blobs)', (engine) => {
  let engines: Engines;
  beforeEach(async () => { engines = await Engines.open(engine); });
  afterEach(() => engines.close());

  test('a sweep past retention removes the bodies and the record; younger ones stay', async () => {
    let nowMs = Date.parse('2026-11-10T12:00:00Z');
    const archive = new CallArchive(engines.store, engines.blobs, { retentionDays: 7 }, silentLogger(), () => new Date(nowMs));
    await archive.ensureIndexes();
    const old = record({ created_at_ms: nowMs - 6 * DAY_MS });
    const young = record({ created_at_ms: nowMs - DAY_MS });
    await archive.handleBatch([old, young].map((value, i) => ({ topic: TOPICS.archive, key: value.request_id, value, offset: String(i), partition: 0 })));
    expect((await engines.blobs.list('archive/')).length).toBe(2);

    nowMs += 2 * DAY_MS;
    expect(await archive.sweep()).toBe(1);
    const youngDoc = await archiveCollection(engines.store).findOne({ _id: young.request_id });
    expect((await engines.blobs.list('archive/')).map((b) => b.key)).toEqual([youngDoc!.blob_key]);
    await expect(archive.lookup('acct_a', old.request_id)).rejects.toMatchObject({ status: 404 });
    expect((await archive.lookup('acct_a', young.request_id)).request_id).toBe(young.request_id);
  });

  const asMessages = (records: CallArchived[]) => records.map((value, i) => ({ topic: TOPICS.archive, key: value.request_id, value, offset: String(i), partition: 0 }));

  test('a batch writes one segment per day; each lookup reads back exactly its own bodies', async () => {
    const nowMs = Date.parse('2026-11-10T12:00:00Z');
    const archive = new CallArchive(engines.store, engines.blobs, { retentionDays: 7 }, silentLogger(), () => new Date(nowMs));
    await archive.ensureIndexes();
    const today = [1, 2, 3].map((n) => record({ created_at_ms: nowMs - n * 60_000, request_json: JSON.stringify({ n, text: 'é'.repeat(n * 7) }) }));
    const yesterday = record({ created_at_ms: nowMs - DAY_MS });
    await archive.handleBatch(asMessages([...today, yesterday]));
    expect((await engines.blobs.list('archive/')).map((b) => b.key)).toEqual([
      expect.stringMatching(/^archive\/2026-11-09\/[0-9a-f]{32}\.jsonl$/), expect.stringMatching(/^archive\/2026-11-10\/[0-9a-f]{32}\.jsonl$/),
    ]);
    for (const r of [...today, yesterday]) {
      const view = await archive.lookup('acct_a', r.request_id);
      expect([view.request, view.response]).toEqual([JSON.parse(r.request_json), JSON.parse(r.response_json)]);
    }
  });

  test('a redelivered record is not written again; one new beside it gets a segment of its own', async () => {
    const nowMs = Date.parse('2026-11-10T12:00:00Z');
    const archive = new CallArchive(engines.store, engines.blobs, { retentionDays: 7 }, silentLogger(), () => new Date(nowMs));
    const [p, q, r] = [1, 2, 3].map((n) => record({ created_at_ms: nowMs - n * 1_000 }));
    await archive.handleBatch(asMessages([p, q]));
    // Delivered again, whole and in other company (as a rebalanced group may).
    await archive.handleBatch(asMessages([p, q]));
    await archive.handleBatch(asMessages([p]));
    await archive.handleBatch(asMessages([q, r]));
    const docs = await archiveCollection(engines.store).find({});
    // Every blob is named by a record: nothing written for nobody.
    expect((await engines.blobs.list('archive/')).map((b) => b.key).sort()).toEqual([...new Set(docs.map((d) => d.blob_key))].sort());
    expect(new Set(docs.map((d) => d.blob_key)).size).toBe(2);
    for (const x of [p, q, r]) expect((await archive.lookup('acct_a', x.request_id)).response).toEqual(JSON.parse(x.response_json));
  });

  test('a segment stays until the last record naming it is swept', async () => {
    let nowMs = Date.parse('2026-11-10T01:00:00Z');
    const archive = new CallArchive(engines.store, engines.blobs, { retentionDays: 7 }, silentLogger(), () => new Date(nowMs));
    await archive.ensureIndexes();
    const first = record({ created_at_ms: nowMs - 60 * 60_000 });
    const last = record({ created_at_ms: nowMs });
    await archive.handleBatch(asMessages([first, last]));
    nowMs += 7 * DAY_MS - 30 * 60_000;
    expect(await archive.sweep()).toBe(1);
    expect(await engines.blobs.list('archive/')).toHaveLength(1);
    expect((await archive.lookup('acct_a', last.request_id)).response).toEqual(JSON.parse(last.response_json));
    nowMs += 60 * 60_000;
    expect(await archive.sweep()).toBe(1);
    expect(await engines.blobs.list('archive/')).toEqual([]);
  });

  test('a record already past retention when it arrives is not kept', async () => {
    const nowMs = Date.parse('2026-11-10T12:00:00Z');
    const archive = new CallArchive(engines.store, engines.blobs, { retentionDays: 1 }, silentLogger(), () => new Date(nowMs));
    const late = record({ created_at_ms: nowMs - 3 * DAY_MS });
    await archive.handleBatch([{ topic: TOPICS.archive, key: late.request_id, value: late, offset: '0', partition: 0 }]);
    expect(await archiveCollection(engines.store).count({})).toBe(0);
    expect(await engines.blobs.list('archive/')).toEqual([]);
  });
});

test('an archive made before 2026-11-29 loses its index of every provider id; its unbilled calls stay found by theirs (embedded store)', async () => {
  const engines = await Engines.open('embedded');
  try {
    const docs = archiveCollection(engines.store);
    // As the older version wrote them: every provider id indexed, no record marked unbilled.
    await docs.ensureIndex({ fields: { provider_response_id: 1 } });
    const old = (r: CallArchived) => ({
      _id: r.request_id, account_id: r.account_id, key_hash: r.key_hash, api_type: r.api_type, model: r.model, provider_response_id: r.provider_response_id,
      streamed: false, mode: 'metadata' as const, request_truncated: false, response_truncated: false, blob_key: null, created_at_ms: r.created_at_ms, archived_at_ms: r.created_at_ms, trace_id: '',
    });
    const failedVideo = record({ api_type: 'video', provider_response_id: 'video-task-old-failed' });
    const billedVideo = record({ api_type: 'video', provider_response_id: 'video-task-old-done' });
    await docs.insertMany([old(failedVideo), old(billedVideo), old(record())]);
    await ledgerCollection(engines.store).insertOne({ _id: billedVideo.request_id, account_id: 'acct_a', provider_response_id: billedVideo.provider_response_id, state: 'applied' } as never);

    const archive = new CallArchive(engines.store, engines.blobs, { retentionDays: 7 }, silentLogger());
    await archive.ensureIndexes();
    const side = new DatabaseSync(join(engines.dir, 'store', 'store.sqlite'));
    try {
      const names = (side.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'doc:call_archive'`).all() as { name: string }[]).map((r) => r.name);
      expect(names.filter((n) => n.includes('provider'))).toEqual(['ix:call_archive:unbilled_provider_id:sparse']);
    } finally {
      side.close();
    }
    expect((await docs.find({ unbilled_provider_id: { $exists: true } })).map((d) => d._id)).toEqual([failedVideo.request_id]);
    for (const r of [failedVideo, billedVideo]) expect((await archive.lookup('acct_a', r.provider_response_id)).request_id).toBe(r.request_id);

    // Once per store: a second start does not scan again.
    const later = record({ api_type: 'video', provider_response_id: 'video-task-written-old-later' });
    await docs.insertOne(old(later));
    await new CallArchive(engines.store, engines.blobs, { retentionDays: 7 }, silentLogger()).ensureIndexes();
    expect(await docs.count({ unbilled_provider_id: { $exists: true } })).toBe(1);
  } finally {
    await engines.close();
  }
});
