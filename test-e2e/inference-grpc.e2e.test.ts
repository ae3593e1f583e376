import { createHash, randomUUID } from 'node:crypto';
import { createInferenceClient, type ChatStreamEvent, type InferenceClient } from '@gw/inference-client';
import { AuthenticationError, IdentitySigner, InputError, PaymentRequiredError, usdToMicros, type GatewayError, type Identity } from '@gw/platform';
import { api, spendableMicros, waitForBilledRequest } from './harness/api';
import { E2E_MODEL } from './harness/catalog';
import { describeSymbol, listServices } from './harness/reflection';
import { useStack } from './harness/stack';

/**
 * The inference gRPC API in the multi-process mode on Kafka and the MongoDB-wire server: internal teams with
 * their API key, platform services with their signed identity; the same validation, errors and billing as the
 * HTTP route through the edge.
 */
const messages = [{ role: 'user', content: 'hello over gRPC from the e2e suite' }];
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected the call to fail'); }, (e: GatewayError) => e);
async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('inference gRPC API (processes)', () => {
  const stack = useStack('processes');
  const clients: InferenceClient[] = [];
  const client = (...args: Parameters<typeof createInferenceClient>) => { const c = createInferenceClient(...args); clients.push(c); return c; };
  const withKey = (key: string) => client(stack.internal.inferenceGrpc, { kind: 'api-key', apiKey: key }, { deadlineMs: 30_000 });
  /** The account's own key as a service acting for it names it (the batch service keeps the creator's identity). */
  const accountIdentity = (): Identity => ({
    accountId: stack.accountId, keyHash: createHash('sha256').update(stack.key).digest('hex'), isManagement: true, keyLimitMicros: null, keyLimitReset: null,
  });
  afterAll(() => { for (const c of clients) c.close(); });

  test('a unary completion with an API key answers like the HTTP route and is billed once, at the cost it reports', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const res = await withKey(stack.key).createChatCompletion({ model: E2E_MODEL, messages });
    expect(res.completion).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: expect.any(String) }, finish_reason: 'stop' }] });
    expect(res.requestId).toMatch(/^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.cost.priced).toBe(true);
    expect(res.cost.chargedMicros).toBeGreaterThan(0);

    const record = await waitForBilledRequest(stack.baseURL, stack.key, res.requestId);
    expect(record).toMatchObject({ request_id: res.requestId, model: E2E_MODEL, api_type: 'chat', streamed: false,
      usage: { prompt_tokens: res.usage.promptTokens, completion_tokens: res.usage.completionTokens } });
    expect(usdToMicros(record.charged_cost)).toBe(res.cost.chargedMicros);
    expect(usdToMicros(record.list_cost)).toBe(res.cost.listMicros);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - res.cost.chargedMicros);
  });

  test('a streamed completion with an API key sends chunks, then its summary, and is billed once', async () => {
    const events = await collect(withKey(stack.key).streamChatCompletion({ model: E2E_MODEL, messages }));
    const chunks = events.filter((e) => e.type === 'chunk');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((e) => e.chunk.object === 'chat.completion.chunk')).toBe(true);
    const summary = events.at(-1)!;
    if (summary.type !== 'summary') throw new Error('the stream must end with its summary');
    const record = await waitForBilledRequest(stack.baseURL, stack.key, summary.requestId);
    expect(record).toMatchObject({ streamed: true, usage: { completion_tokens: summary.usage.completionTokens } });
    expect(usdToMicros(record.charged_cost)).toBe(summary.cost.chargedMicros);
  });

  test.each<[string, object]>([
    ['no messages', { model: E2E_MODEL }],
    ['a bad role', { model: E2E_MODEL, messages: [{ role: 'robot', content: 'x' }] }],
    ['a negative max_tokens', { model: E2E_MODEL, messages, max_tokens: -1 }],
    ['an unknown model', { model: 'no-such/model', messages }],
  ])('%s: the same typed error over gRPC as the HTTP route answers, and no upstream call', async (_what, body) => {
    const upstream = await stack.simulatorRequestCount();
    const http = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body });
    const err = await failure(withKey(stack.key).createChatCompletion(body));
    expect({ status: err.status, type: err.type, code: err.code, param: err.param, message: err.message }).toEqual({
      status: http.status, type: http.body.error.type, code: http.body.error.code, param: http.body.error.param, message: http.body.error.message,
    });
    expect(http.status === 400 ? err : null).toEqual(http.status === 400 ? expect.any(InputError) : null);
    expect(await stack.simulatorRequestCount()).toBe(upstream);
  });

  test('an account without balance gets the 402 error (FAILED_PRECONDITION) as over HTTP', async () => {
    const http = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.brokeKey, body: { model: E2E_MODEL, messages } });
    const err = await failure(withKey(stack.brokeKey).createChatCompletion({ model: E2E_MODEL, messages }));
    expect(err).toBeInstanceOf(PaymentRequiredError);
    expect({ status: err.status, code: err.code }).toEqual({ status: http.status, code: http.body.error.code });
  });

  test.each<[string, () => InferenceClient]>([
    ['no API key', () => withKey('')],
    ['an unknown API key', () => withKey(`sk-gw-v1-${'0'.repeat(48)}`)],
    ['a service identity signed with another secret', () => client(stack.internal.inferenceGrpc, { kind: 'service', signer: new IdentitySigner('not-the-platform-secret-0123456789abcdef', 'batch') })],
  ])('%s is refused UNAUTHENTICATED', async (_what, make) => {
    const err = await failure(make().createChatCompletion({ model: E2E_MODEL, messages }, { actingFor: accountIdentity() }));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.status).toBe(401);
  });

  test('a service retrying with its request id gets the recorded response: no second upstream call, billed once', async () => {
    const service = client(stack.internal.inferenceGrpc, { kind: 'service', signer: new IdentitySigner(stack.identitySecret, 'batch') }, { deadlineMs: 30_000 });
    const requestId = `br-${randomUUID()}`;
    const opts = { actingFor: accountIdentity(), requestId };
    const before = await spendableMicros(stack.baseURL, stack.key);
    const first = await service.createChatCompletion({ model: E2E_MODEL, messages }, opts);
    expect(first).toMatchObject({ requestId, replayed: false });
    const upstream = await stack.simulatorRequestCount();
    const again = await service.createChatCompletion({ model: E2E_MODEL, messages }, opts);
    expect(again).toEqual({ ...first, replayed: true });
    expect(await stack.simulatorRequestCount()).toBe(upstream);

    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    expect(usdToMicros(record.charged_cost)).toBe(first.cost.chargedMicros);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - first.cost.chargedMicros);
  });

  test('every service\'s gRPC port answers server reflection (grpcurl list / describe without .proto files)', async () => {
    const served = {
      [stack.internal.keysGrpc]: 'gateway.keys.v1.KeysService',
      [stack.internal.billingGrpc]: 'gateway.billing.v1.BillingService',
      [stack.internal.inferenceGrpc]: 'gateway.inference.v1.Inference',
    };
    for (const [address, service] of Object.entries(served)) {
      expect(await listServices(address)).toEqual(expect.arrayContaining([service, 'grpc.health.v1.Health']));
    }
    const described = await describeSymbol(stack.internal.inferenceGrpc, 'gateway.inference.v1.Inference');
    for (const name of ['gateway.inference.v1', 'CreateChatCompletion', 'StreamChatCompletion', 'body_json', 'request_id']) {
      expect(described).toContain(name);
    }
  });
});
