import { chatJobStore, toJobObject } from './chat-job';
import { IDENTITY, openTestStore, silentLogger, STORE_ENGINES, type TestStore } from './chat-job-test-support';
import { moveLegacyChatJobs } from './legacy-chat-jobs';

describe.each(STORE_ENGINES)('async chat jobs of an earlier version (%s)', (engine) => {
  let t: TestStore;

  beforeEach(async () => { t = await openTestStore(engine); });
  afterEach(async () => {
    await t.store.collection('chat_jobs').deleteMany({});
    await t.dispose();
  });

  const legacyJob = (id: string, fields: Record<string, unknown>) => ({
    _id: id, model: 'test/chat', request_id: 'br-00000000-0000-4000-8000-000000000001', qos: 'completion',
    account_id: IDENTITY.accountId, identity: IDENTITY, trace_id: 'trace', request_json: '{"model":"test/chat","messages":[]}',
    created_at_ms: 1_800_000_000_000, expires_at_ms: 1_800_086_400_000, worker_id: null, lease_until_ms: 0, attempts: 0, ...fields,
  });

  it('are moved once into the jobs collection and read, poll and claim as before', async () => {
    const completion = { id: 'chatcmpl-1', object: 'chat.completion', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
    const legacy = t.store.collection('chat_jobs');
    await legacy.insertOne(legacyJob('chatjob_queued', { status: 'queued' }));
    await legacy.insertOne(legacyJob('chatjob_done', {
      status: 'completed', in_progress_at_ms: 1_800_000_001_000, completed_at_ms: 1_800_000_002_000, attempts: 1, completion_json: JSON.stringify(completion),
    }));

    expect(await moveLegacyChatJobs(t.store, silentLogger())).toBe(2);
    expect(await moveLegacyChatJobs(t.store, silentLogger())).toBe(0);
    expect(await legacy.count({})).toBe(0);

    const jobs = chatJobStore(t.store, () => 1_800_000_003_000);
    const done = (await jobs.getForOwner('chatjob_done', IDENTITY.accountId))!;
    expect(toJobObject(done)).toEqual({
      id: 'chatjob_done', object: 'chat.completion.job', status: 'completed', model: 'test/chat', request_id: done.payload.request_id,
      qos: 'completion', created_at: 1_800_000_000, expires_at: 1_800_086_400, in_progress_at: 1_800_000_001, completed_at: 1_800_000_002,
      completion, usage: completion.usage,
    });
    expect(await jobs.claim('w', 1_000)).toMatchObject({ _id: 'chatjob_queued', attempts: 1, payload: { identity: IDENTITY } });
  });
});
