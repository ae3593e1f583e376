import type { Server } from 'node:http';
import { catalogSchema } from '@gw/catalog';
import {
  closeServer, createHttpApp, finishHttpApp, GatewayError, Health, IDENTITY_HEADER, IdentitySigner, IdentityVerifier, listen, PaymentRequiredError, type Identity,
} from '@gw/platform';
import { createChatProvider } from '@gw/providers';
import { ModelDirectory } from '../catalog/model-objects';
import { DeploymentRouter } from '../routing/deployment-router';
import { ChatService } from '../chat/chat-service';
import { asyncChatRoutes } from './async-chat-routes';
import { AsyncChatService } from './async-chat-service';
import { JOBS_COLLECTION } from '@gw/jobs';
import { chatJobStore, type ChatJobStore } from './chat-job';
import { completionFor, IDENTITY, openTestStore, silentLogger, type TestStore } from './chat-job-test-support';
import { CallArchiver } from '@gw/call-archive';

const SECRET = 'async-chat-test-identity-secret-0123456789';

const CATALOG = catalogSchema.parse({
  providers: { sim: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' } },
  models: [{
    id: 'test/chat', name: 'Test chat', owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    per_request_limits: { prompt_tokens: null, completion_tokens: 100 },
    parameter_schema: { temperature: { type: 'number', options: null, default: 1, min: 0, max: 2 } },
    deployments: [{ id: 'dep', provider: 'sim', provider_model: 'chat', price: { prompt_per_million: '1', completion_per_million: '2' } }],
  }],
});

const DAY_MS = 24 * 60 * 60_000;
const BODY = { model: 'test/chat', messages: [{ role: 'user', content: 'hello' }] };
const OTHER: Identity = { ...IDENTITY, accountId: 'acct_other' };

describe('async chat service', () => {
  let t: TestStore;
  let jobs: ChatJobStore;
  let service: AsyncChatService;
  let reserve: jest.Mock;
  let release: jest.Mock;
  let woken: number;
  let clock: number;

  beforeEach(async () => {
    t = await openTestStore('embedded');
    clock = Date.parse('2026-11-02T10:00:00Z');
    jobs = chatJobStore(t.store, () => clock);
    await jobs.ensureIndexes();
    reserve = jest.fn(async () => undefined);
    release = jest.fn();
    woken = 0;
    // A real router over an unreachable upstream: submit only validates against its routes, never calls them.
    const router = new DeploymentRouter(CATALOG, createChatProvider, {}, silentLogger());
    const chat = new ChatService({ models: new ModelDirectory(CATALOG), router, spend: { reserve, release } as never, usage: {} as never, archive: CallArchiver.off(silentLogger()), logger: silentLogger() });
    service = new AsyncChatService({
      jobs, chat, workers: { wake: () => { woken++; }, cancelLocal: () => undefined },
      expiresAfterMs: DAY_MS, cancelWaitMs: 200, now: () => clock,
    });
  });

  afterEach(async () => {
    await t.dispose();
  });

  it('queues a job and answers with it at once, pre-authorized and with a platform request_id', async () => {
    const job = await service.submit({ ...BODY, max_tokens: 50 }, IDENTITY, 'trace-1');
    expect(job).toEqual({
      id: expect.stringMatching(/^chatjob_[0-9a-f]+$/),
      object: 'chat.completion.job',
      status: 'queued',
      model: 'test/chat',
      request_id: expect.stringMatching(/^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      qos: 'completion',
      created_at: clock / 1000,
      expires_at: (clock + DAY_MS) / 1000,
    });
    // The job's spend is held under its request id (a worker's run reserves the same id again, holding once).
    expect(reserve).toHaveBeenCalledWith(IDENTITY, job.request_id, expect.objectContaining({ deployments: ['dep'], maxOutputTokens: 50, choices: 1 }), 'trace-1');
    expect(woken).toBe(1);
    const stored = (await jobs.get(job.id))!;
    expect(JSON.parse(stored.payload.request_json)).toEqual({ ...BODY, max_tokens: 50 });
    expect(stored.payload.identity).toEqual(IDENTITY);
  });

  it.each([
    [{ ...BODY, stream: true }, 400, 'stream', 'invalid_request'],
    [{ ...BODY, stream: 'yes' }, 400, 'stream', 'invalid_request'],
    [{ ...BODY, callback_url: 'https://example.com/hook' }, 400, 'callback_url', 'unsupported_parameter'],
    [{ model: 'test/chat' }, 400, 'messages', 'invalid_request'],
    [{ ...BODY, messages: [{ role: 'wizard', content: 'x' }] }, 400, 'messages[0].role', 'invalid_request'],
    [{ ...BODY, max_tokens: 0 }, 400, 'max_tokens', 'invalid_request'],
    [{ ...BODY, max_tokens: 101 }, 400, 'max_tokens', 'invalid_request'],
    [{ ...BODY, temperature: 7 }, 400, 'temperature', 'invalid_request'],
    [{ ...BODY, model: 'no/such-model' }, 404, 'model', 'model_not_found'],
    ['not an object', 400, 'body', 'invalid_request'],
  ])('refuses %j with %i naming %s', async (body, status, param, code) => {
    const err = await service.submit(body, IDENTITY, 't').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status, param, code });
    expect(await t.store.collection(JOBS_COLLECTION).count({})).toBe(0);
  });

  const deep = (levels: number) => { let v: object = {}; for (let i = 0; i < levels; i++) v = { a: v }; return v; };
  it.each<[string, object, string, string]>([
    ['extra_body nested 10,000 levels', { ...BODY, extra_body: deep(10_000) }, 'extra_body', 'invalid_request'],
    ['metadata nested 10,000 levels', { ...BODY, metadata: deep(10_000) }, 'metadata', 'invalid_request'],
    ['extra_body replacing max_tokens past the limit', { ...BODY, extra_body: { max_tokens: 100_000 } }, 'extra_body.max_tokens', 'invalid_request'],
    ['a parameter the model\'s provider cannot honour', { ...BODY, top_k: 5 }, 'top_k', 'unsupported_parameter'],
  ])('refuses %s with a 400 and queues nothing', async (_what, body, param, code) => {
    const err = await service.submit(body, IDENTITY, 't').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param, code });
    expect(await t.store.collection(JOBS_COLLECTION).count({})).toBe(0);
  });

  it('refuses at submit when the balance does not allow the call, and queues nothing', async () => {
    reserve.mockRejectedValueOnce(new PaymentRequiredError());
    await expect(service.submit(BODY, IDENTITY, 't')).rejects.toMatchObject({ status: 402, code: 'insufficient_balance' });
    expect(await t.store.collection(JOBS_COLLECTION).count({})).toBe(0);
  });

  it('shows a job only to its own account', async () => {
    const job = await service.submit(BODY, IDENTITY, 't');
    await expect(service.get(job.id, IDENTITY)).resolves.toMatchObject({ id: job.id, status: 'queued' });
    await expect(service.get(job.id, OTHER)).rejects.toMatchObject({ status: 404, code: 'job_not_found' });
    await expect(service.cancel(job.id, OTHER)).rejects.toMatchObject({ status: 404 });
    await expect(service.get('chatjob_nope', IDENTITY)).rejects.toMatchObject({ status: 404 });
  });

  it('carries the completion and usage when completed, the error when failed, and the times reached', async () => {
    const ok = await service.submit(BODY, IDENTITY, 't');
    const bad = await service.submit(BODY, IDENTITY, 't');
    clock += 2_000;
    await jobs.claim('w', 30_000);
    await jobs.claim('w', 30_000);
    clock += 3_000;
    await jobs.complete(ok.id, 'w', { completion_json: JSON.stringify(completionFor(ok.request_id)) });
    await jobs.fail(bad.id, 'w', { code: 'upstream_error', message: 'The provider failed (HTTP 503)' });

    const done = await service.get(ok.id, IDENTITY);
    expect(done).toMatchObject({ status: 'completed', in_progress_at: ok.created_at + 2, completed_at: ok.created_at + 5 });
    expect(done.completion).toEqual(completionFor(ok.request_id));
    expect(done.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
    expect(done.error).toBeUndefined();
    const failed = await service.get(bad.id, IDENTITY);
    expect(failed).toMatchObject({ status: 'failed', failed_at: bad.created_at + 5, error: { code: 'upstream_error', message: 'The provider failed (HTTP 503)' } });
    expect(failed.completion).toBeUndefined();

    // Cancelling a terminal job returns it unchanged.
    await expect(service.cancel(ok.id, IDENTITY)).resolves.toEqual(done);
  });

  it('cancels a queued job at once; a running one reports the flag while its worker has not stopped', async () => {
    const queued = await service.submit(BODY, IDENTITY, 't');
    await expect(service.cancel(queued.id, IDENTITY)).resolves.toMatchObject({ status: 'cancelled', cancelled_at: queued.created_at });
    // It will never run: its spend hold is released.
    expect(release).toHaveBeenCalledWith(IDENTITY, queued.request_id, 't');

    const running = await service.submit(BODY, IDENTITY, 't');
    await jobs.claim('w-elsewhere', 30_000);
    const answer = await service.cancel(running.id, IDENTITY);
    expect(answer).toMatchObject({ status: 'in_progress', cancel_requested_at: running.created_at });
    // A running job's hold is its worker's to settle or release.
    expect(release).toHaveBeenCalledTimes(1);
  });

  describe('over HTTP', () => {
    let server: Server;
    let base: string;

    beforeEach(async () => {
      const app = createHttpApp({ logger: silentLogger(), health: new Health(), bodyLimitBytes: 1 << 20, identity: new IdentityVerifier(SECRET) });
      app.use(asyncChatRoutes(service));
      finishHttpApp(app, silentLogger());
      server = await listen(app, 0, '127.0.0.1');
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/async/chat/completions`;
    });

    afterEach(async () => {
      await closeServer(server, 100);
    });

    /** Signs `identity` as the edge would, for this method and path. */
    const call = async (method: string, url: string, opts: { identity?: Identity; body?: unknown; headers?: Record<string, string> } = {}) => {
      const { pathname, search } = new URL(url);
      const token = opts.identity ? { [IDENTITY_HEADER]: new IdentitySigner(SECRET, 'edge').mint({ method, path: pathname + search }, opts.identity, 't') } : {};
      const res = await fetch(url, {
        method,
        headers: { 'content-type': 'application/json', ...token, ...opts.headers },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    it('submits, polls and cancels; a caller X-Request-ID never becomes the request_id', async () => {
      const clientId = 'br-00000000-0000-4000-8000-000000000001';
      const submitted = await call('POST', base, { identity: IDENTITY, body: BODY, headers: { 'x-request-id': clientId } });
      expect(submitted.status).toBe(200);
      expect(submitted.body.request_id).not.toBe(clientId);
      const polled = await call('GET', `${base}/${submitted.body.id}`, { identity: IDENTITY });
      expect(polled).toEqual({ status: 200, body: submitted.body });
      const cancelled = await call('POST', `${base}/${submitted.body.id}/cancel`, { identity: IDENTITY });
      expect(cancelled.body.status).toBe('cancelled');
    });

    it('answers errors in the spec envelope', async () => {
      const stream = await call('POST', base, { identity: IDENTITY, body: { ...BODY, stream: true } });
      expect(stream.status).toBe(400);
      expect(stream.body).toMatchObject({ code: '400', error: { code: 'invalid_request', param: 'stream', type: 'invalid_request_error' } });
      expect((await call('POST', base, { body: BODY })).status).toBe(401);
      const foreign = await call('GET', `${base}/chatjob_nope`, { identity: OTHER });
      expect(foreign).toMatchObject({ status: 404, body: { code: '404', error: { code: 'job_not_found' } } });
    });
  });
});
