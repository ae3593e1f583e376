import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBatchingPublisher, createBus, createOutbox, type Bus, type BatchingPublisher, type Outbox } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { TOPICS, type CallArchived } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { boundedJson, CallArchiver, type ArchiveMode, type ArchivedCall } from './call-archiver';
import { archivableCopy } from './archivable';
import { REDACTED } from './redact';

const logger = createLogger('archive-test', 'silent');
const IDENTITY = { accountId: 'acct_a', keyHash: 'ab'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };

describe('what the archive keeps of a body', () => {
  test('credential fields and credential-shaped strings are redacted, the rest kept', () => {
    const body = {
      model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'my key is sk-gw-v1-0123456789abcdef0123 ok' }],
      metadata: { api_key: 'x', Authorization: 'Bearer abc', nested: { client_secret: 's', password: 'p', note: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig' } },
      tools: [{ function: { name: 'f', parameters: { properties: { token_count: { type: 'integer' } } } } }],
    };
    expect(archivableCopy(body)).toEqual({
      model: 'm', max_tokens: 5, messages: [{ role: 'user', content: `my key is ${REDACTED} ok` }],
      metadata: { api_key: REDACTED, Authorization: REDACTED, nested: { client_secret: REDACTED, password: REDACTED, note: REDACTED } },
      tools: body.tools,
    });
  });

  test('a body over the bound is cut on a character boundary and flagged; one under it is whole', () => {
    expect(boundedJson({ a: 'b' }, 100)).toEqual({ text: '{"a":"b"}', truncated: false });
    const cut = boundedJson({ text: 'é'.repeat(100) }, 20);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(20);
    expect(cut.text).toMatch(/^\{"text":"é+$/);
  });

  test('a record counts at least its serialized size, so a publish of the largest stays under the bus budget', () => {
    const { sizeOf, maxBatchBytes } = CallArchiver.publishOptions;
    // The worst case for escaping, at the largest bound: the record's JSON is under what it is counted at.
    const worst = boundedJson('"\\'.repeat(200_000), 192 * 1024);
    const record = { request_json: worst.text, response_json: worst.text };
    expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThanOrEqual(sizeOf({ key: 'k', value: record }));
    // Two such records exceed a publish, one fits; small records travel a hundred and more to a publish.
    expect(2 * sizeOf({ key: 'k', value: record })).toBeGreaterThan(maxBatchBytes);
    expect(Buffer.byteLength(JSON.stringify(record))).toBeLessThan(1024 * 1024 - 4096);
    const small = { request_json: '{"model":"m","messages":[]}', response_json: '{"id":"chatcmpl-1"}' };
    expect(Math.floor(maxBatchBytes / sizeOf({ key: 'k', value: small }))).toBeGreaterThan(100);
  });
});

describe('CallArchiver through a real publisher, outbox and bus', () => {
  let dir: string;
  let store: Store;
  let bus: Bus;
  let outbox: Outbox;
  let publisher: BatchingPublisher;
  const seen: CallArchived[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-archiver-'));
    store = createStore({ engine: 'embedded', dataDir: dir });
    bus = createBus({ engine: 'embedded', store, pollMs: 20 }, logger);
    outbox = createOutbox({ bus, store, logger });
    publisher = createBatchingPublisher({ outbox, logger, lingerMs: 1, ...CallArchiver.publishOptions });
    await bus.subscribe({ topics: [TOPICS.archive], group: 'archive-test', handleBatch: async (messages) => { seen.push(...messages.map((m) => m.value as CallArchived)); } });
  });

  afterAll(async () => {
    await publisher.close();
    await outbox.close();
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (requestId: string): ArchivedCall => ({
    requestId, identity: IDENTITY, apiType: 'chat', model: 'test/chat', providerResponseId: `chatcmpl-${requestId}`, streamed: true,
    request: { model: 'test/chat', api_key: 'sk-secret-value-0123456789', messages: [{ role: 'user', content: 'x'.repeat(2000) }] },
    response: { id: `chatcmpl-${requestId}`, choices: [] }, startedAtMs: 1_700_000_000_000, traceId: 'trace-9',
  });

  async function archived(requestId: string): Promise<CallArchived> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const hit = seen.find((r) => r.request_id === requestId);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no archive record for ${requestId}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  test.each<[ArchiveMode, boolean]>([['full', true], ['metadata', false]])('mode %s: a record per call, bodies only in full mode', async (mode, bodies) => {
    const archiver = new CallArchiver(publisher, { mode, maxBodyBytes: 1024 }, logger);
    archiver.record(call(`br-${mode}`));
    const r = await archived(`br-${mode}`);
    expect(r).toEqual(expect.objectContaining({
      account_id: 'acct_a', key_hash: IDENTITY.keyHash, api_type: 'chat', provider_response_id: `chatcmpl-br-${mode}`, streamed: true, mode,
      created_at_ms: 1_700_000_000_000, trace_id: 'trace-9', response_truncated: false, request_truncated: bodies,
    }));
    if (bodies) {
      expect(Buffer.byteLength(r.request_json)).toBeLessThanOrEqual(1024);
      expect(r.request_json).toContain(`"api_key":"${REDACTED}"`);
      expect(r.request_json).not.toContain('sk-secret');
      expect(JSON.parse(r.response_json)).toEqual({ id: 'chatcmpl-br-full', choices: [] });
    } else {
      expect([r.request_json, r.response_json]).toEqual(['', '']);
    }
  });

  test('mode off: nothing is published', async () => {
    CallArchiver.off(logger).record(call('br-off'));
    new CallArchiver(publisher, { mode: 'full', maxBodyBytes: 1024 }, logger).record(call('br-after-off'));
    await archived('br-after-off');
    expect(seen.some((r) => r.request_id === 'br-off')).toBe(false);
  });
});
