import { randomUUID } from 'node:crypto';
import { createInferenceClient, type ChatStreamEvent, type InferenceClient } from '@gw/inference-client';
import * as grpc from '@grpc/grpc-js';
import {
  AuthenticationError, callUnary, ConflictError, grpcClientOptions, InputError, PaymentRequiredError, serviceIdentityInterceptor, type GatewayError,
} from '@gw/platform';
import { inferenceProto, type CreateChatCompletionResponse, type InferenceClient as GeneratedClient } from '@gw/proto';
import { API_KEY, BROKE, FUNDED, identityOf, PAUSED_USAGE, PRICE_FACTOR_PPM, serviceSigner, startGrpcTestStack, type GrpcTestStack } from './grpc-test-stack';

jest.setTimeout(60_000);

const messages = [{ role: 'user', content: 'answer over gRPC please' }];
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected the call to fail'); }, (e: GatewayError) => e);
async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}
const withMetadata = (key: string, value: string): grpc.Interceptor => (options, next) => new grpc.InterceptingCall(next(options), {
  start: (md, listener, go) => { md.set(key, value); go(md, listener); },
});
/** A call through the generated client, for what the typed client never sends. */
async function rawCall(addr: string, req: { body_json: string; request_id: string }, interceptor: grpc.Interceptor): Promise<CreateChatCompletionResponse> {
  const raw: GeneratedClient = new inferenceProto.gateway.inference.v1.Inference(addr, grpc.credentials.createInsecure(), { ...grpcClientOptions, interceptors: [interceptor] });
  try {
    return await callUnary(raw, raw.CreateChatCompletion, req);
  } finally {
    raw.close();
  }
}
/** List and charged cost of a call on the test price (1 and 2 micros per token) and the account's factor. */
const expectedCost = (usage: { promptTokens: number; completionTokens: number }) => {
  const list = usage.promptTokens + 2 * usage.completionTokens;
  return { priced: true, listMicros: list, chargedMicros: Math.round((list * PRICE_FACTOR_PPM) / 1_000_000) };
};

describe('inference gRPC API (real keys, billing, inference; OpenAI simulator)', () => {
  let stack: GrpcTestStack;
  let withKey: InferenceClient;
  let asService: InferenceClient;
  const clients: InferenceClient[] = [];
  const client = (...args: Parameters<typeof createInferenceClient>) => { const c = createInferenceClient(...args); clients.push(c); return c; };

  beforeAll(async () => {
    stack = await startGrpcTestStack();
    withKey = client(stack.inferenceAddr, { kind: 'api-key', apiKey: API_KEY });
    asService = client(stack.inferenceAddr, { kind: 'service', signer: serviceSigner() });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await stack?.close();
  });

  it('answers a unary completion for an API key, with its request id, usage and cost, billed once under that id', async () => {
    const res = await withKey.createChatCompletion({ model: 'test/echo', messages });
    expect(res.requestId).toMatch(/^br-[0-9a-f-]{36}$/);
    expect(res.replayed).toBe(false);
    expect(res.completion).toMatchObject({ object: 'chat.completion', model: expect.any(String) });
    expect(res.completion.choices[0].message.content).toEqual(expect.any(String));
    expect(res.usage.completionTokens).toBeGreaterThan(0);
    expect(res.usage).toEqual({
      promptTokens: res.completion.usage!.prompt_tokens, completionTokens: res.completion.usage!.completion_tokens, totalTokens: res.completion.usage!.total_tokens,
    });
    expect(res.cost).toEqual(expectedCost(res.usage));
    const event = await stack.usageEventFor(res.requestId);
    expect(event).toMatchObject({ account_id: FUNDED, model: 'test/echo', deployment: 'test/echo-dep', streamed: false });
    expect(stack.events.filter((e) => e.request_id === res.requestId)).toHaveLength(1);
  });

  it('streams chunks as the HTTP route sends them, then a summary; usage only when asked for', async () => {
    const plain = await collect(withKey.streamChatCompletion({ model: 'test/echo', messages }));
    const chunks = plain.filter((e) => e.type === 'chunk');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((e) => e.chunk.object === 'chat.completion.chunk' && e.chunk.usage === undefined)).toBe(true);
    const summary = plain.at(-1)!;
    if (summary.type !== 'summary') throw new Error('the stream must end with its summary');
    expect(summary.usage.completionTokens).toBeGreaterThan(0);
    expect(summary.cost).toEqual(expectedCost(summary.usage));
    expect(new Set(plain.map((e) => e.requestId))).toEqual(new Set([summary.requestId]));
    expect(await stack.usageEventFor(summary.requestId)).toMatchObject({ streamed: true, cancelled: false });

    const withUsage = await collect(withKey.streamChatCompletion({ model: 'test/echo', messages, stream_options: { include_usage: true } }));
    const last = withUsage.filter((e) => e.type === 'chunk').at(-1)!;
    expect(last.type === 'chunk' && last.chunk.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it.each<[string, object, string]>([
    ['no messages', { model: 'test/echo' }, 'messages'],
    ['a bad role', { model: 'test/echo', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['a non-numeric temperature', { model: 'test/echo', messages, temperature: 'hot' }, 'temperature'],
    ['stream: true on the unary call', { model: 'test/echo', messages, stream: true }, 'stream'],
  ])('refuses %s as INVALID_ARGUMENT with the HTTP route\'s typed error, calling no provider', async (_what, body, param) => {
    const before = stack.simulator.requests;
    const err = await failure(withKey.createChatCompletion(body));
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', param });
    expect(stack.simulator.requests).toBe(before);
  });

  it.each<[string, string, string]>([
    ['not JSON', '{"model": "test/echo", "messages": [', 'body_json'],
    ['not an object', '["test/echo"]', 'body'],
  ])('refuses body_json that is %s', async (_what, bodyJson, param) => {
    const err = await failure(rawCall(stack.inferenceAddr, { body_json: bodyJson, request_id: '' }, withMetadata('authorization', `Bearer ${API_KEY}`)));
    expect(err).toMatchObject({ status: 400, param });
  });

  it('an account without balance is refused with the 402 error (FAILED_PRECONDITION), before any provider call', async () => {
    const before = stack.simulator.requests;
    const err = await failure(asService.createChatCompletion({ model: 'test/echo', messages }, { actingFor: identityOf(BROKE) }));
    expect(err).toBeInstanceOf(PaymentRequiredError);
    expect(err).toMatchObject({ status: 402, code: 'insufficient_balance' });
    expect(stack.simulator.requests).toBe(before);
  });

  it.each<[string, () => InferenceClient, string]>([
    ['no credentials', () => client(stack.inferenceAddr, { kind: 'api-key', apiKey: '' }), 'missing_api_key'],
    ['an unknown API key', () => client(stack.inferenceAddr, { kind: 'api-key', apiKey: `sk-gw-v1-${'00'.repeat(24)}` }), 'invalid_api_key'],
  ])('%s is UNAUTHENTICATED', async (_what, make, code) => {
    const err = await failure(make().createChatCompletion({ model: 'test/echo', messages }));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code });
  });

  it('a service must act for an account, and only a service may choose the request id', async () => {
    const forNoAccount = await failure(rawCall(stack.inferenceAddr, { body_json: JSON.stringify({ model: 'test/echo', messages }), request_id: '' },
      serviceIdentityInterceptor(serviceSigner())));
    expect(forNoAccount).toBeInstanceOf(AuthenticationError);
    expect(forNoAccount).toMatchObject({ code: 'account_required' });
    const err = await failure(withKey.createChatCompletion({ model: 'test/echo', messages }, { requestId: `br-${randomUUID()}` }));
    expect(err).toMatchObject({ status: 400, param: 'request_id' });
    const malformed = await failure(asService.createChatCompletion({ model: 'test/echo', messages }, { actingFor: identityOf(FUNDED), requestId: 'br-not-a-uuid' }));
    expect(malformed).toMatchObject({ status: 400, param: 'request_id' });
  });

  it('a service call with a request id is billed under it, and a retry replays the recorded response without calling the provider', async () => {
    const requestId = `br-${randomUUID()}`;
    const opts = { actingFor: identityOf(FUNDED), requestId };
    const first = await asService.createChatCompletion({ model: 'test/echo', messages }, opts);
    expect(first).toMatchObject({ requestId, replayed: false });
    const upstreamCalls = stack.simulator.requests;
    const again = await asService.createChatCompletion({ model: 'test/echo', messages }, opts);
    expect(again).toEqual({ ...first, replayed: true });
    expect(stack.simulator.requests).toBe(upstreamCalls);
    await stack.usageEventFor(requestId);
    expect(stack.events.filter((e) => e.request_id === requestId)).toHaveLength(1);

    // The id belongs to that call: another account (or the stream RPC) cannot take it over.
    const stolen = await failure(asService.createChatCompletion({ model: 'test/echo', messages }, { ...opts, actingFor: identityOf(BROKE) }));
    expect(stolen).toBeInstanceOf(ConflictError);
    expect(stolen).toMatchObject({ code: 'request_id_conflict' });
  });

  it('a streamed call with a request id replays its chunks and summary', async () => {
    const opts = { actingFor: identityOf(FUNDED), requestId: `br-${randomUUID()}` };
    const first = await collect(asService.streamChatCompletion({ model: 'test/echo', messages }, opts));
    const upstreamCalls = stack.simulator.requests;
    const again = await collect(asService.streamChatCompletion({ model: 'test/echo', messages }, opts));
    expect(again).toEqual(first.map((e) => ({ ...e, replayed: true })));
    expect(stack.simulator.requests).toBe(upstreamCalls);
  });

  it('a stream the client cancels is billed for what the provider generated, marked cancelled', async () => {
    const abort = new AbortController();
    let requestId = '';
    await expect((async () => {
      for await (const e of withKey.streamChatCompletion({ model: 'test/pausing', messages }, { signal: abort.signal })) {
        requestId = e.requestId;
        abort.abort();
      }
    })()).rejects.toMatchObject({ status: expect.any(Number) });
    expect(requestId).toMatch(/^br-/);
    expect(await stack.usageEventFor(requestId)).toMatchObject({ streamed: true, cancelled: true, usage: PAUSED_USAGE });
  });
});
