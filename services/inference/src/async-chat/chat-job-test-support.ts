import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, newId, newRequestId, type Identity, type Logger } from '@gw/platform';
import type { ChatCompletion } from '@gw/provider-spec';
import { createStore, type Store } from '@gw/store';
import { JOBS_COLLECTION } from '@gw/jobs';
import { CHAT_JOB_KIND, type ChatJobDoc, type ChatJobPayload } from './chat-job';
import type { ChatCompleter } from './chat-job-runner';

/** Test-only support for the async chat suites; nothing in production imports it. */

export const silentLogger = (): Logger => createLogger('async-chat-test', process.env.TEST_LOG_LEVEL ?? 'silent');

export type StoreEngine = 'embedded' | 'mongo';
/** The embedded engine always; the MongoDB-wire server too when the jest setup exported `MONGO_URL`. */
export const STORE_ENGINES: StoreEngine[] = process.env.MONGO_URL ? ['embedded', 'mongo'] : ['embedded'];

export interface TestStore {
  store: Store;
  dispose(): Promise<void>;
}

export async function openTestStore(engine: StoreEngine = 'embedded'): Promise<TestStore> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-async-chat-'));
  const store = engine === 'mongo'
    ? createStore({ engine: 'mongo', url: uniqueDatabase(process.env.MONGO_URL!) })
    : createStore({ engine: 'embedded', dataDir: dir });
  return {
    store,
    dispose: async () => {
      if (engine === 'mongo') await store.collection(JOBS_COLLECTION).deleteMany({});
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function uniqueDatabase(url: string): string {
  const u = new URL(url);
  u.pathname = `/async_chat_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  return u.toString();
}

export const IDENTITY: Identity = { accountId: 'acct_a', keyHash: 'aa'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };

let sequence = 0;

/** A queued chat job as submit makes it; `payload` overrides merge into the default payload. */
export function queuedJob(overrides: Partial<Omit<ChatJobDoc, 'payload'>> & { payload?: Partial<ChatJobPayload> } = {}): ChatJobDoc {
  const now = Date.now();
  sequence++;
  const { payload, ...fields } = overrides;
  return {
    _id: newId('chatjob_'),
    kind: CHAT_JOB_KIND,
    status: 'queued',
    owner_id: IDENTITY.accountId,
    payload: {
      model: 'test/chat',
      request_id: newRequestId(),
      qos: 'completion',
      identity: IDENTITY,
      trace_id: 'trace',
      request_json: JSON.stringify({ model: 'test/chat', messages: [{ role: 'user', content: 'hi' }] }),
      ...payload,
    },
    created_at_ms: now + sequence,
    expires_at_ms: now + 24 * 60 * 60_000,
    worker_id: null,
    lease_until_ms: 0,
    attempts: 0,
    ...fields,
  };
}

/** Writes a job document as it stands (a state a crashed worker may have left behind), bypassing enqueue. */
export async function insertJob(store: Store, doc: ChatJobDoc): Promise<void> {
  await store.collection<ChatJobDoc>(JOBS_COLLECTION).insertOne(doc);
}

export function completionFor(requestId: string): ChatCompletion {
  return {
    id: `chatcmpl-${requestId}`,
    object: 'chat.completion',
    created: 1_800_000_000,
    model: 'chat-2026-01-01',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  } as ChatCompletion;
}

/**
 * A ChatService stand-in: waits `latencyMs` (abortable, rejecting with the signal's reason as the real
 * provider does), then "bills" by noting the request id, unless told to fail.
 */
export class FakeChat implements ChatCompleter {
  latencyMs = 0;
  failWith: Error | null = null;
  readonly started: string[] = [];
  readonly billed: string[] = [];
  readonly signals: AbortSignal[] = [];

  async complete(_body: unknown, _id: Identity, _traceId: string, opts: { requestId: string; signal: AbortSignal }) {
    this.started.push(opts.requestId);
    this.signals.push(opts.signal);
    await abortableDelay(this.latencyMs, opts.signal);
    if (this.failWith) throw this.failWith;
    this.billed.push(opts.requestId);
    return { requestId: opts.requestId, completion: completionFor(opts.requestId) };
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not met in time');
}
