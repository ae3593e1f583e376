import { GatewayError, InputError, RateLimitError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type NativeEvent, type NativeRequest } from '@gw/provider-spec';
import { SNAPSHOT_SUFFIX, startAnthropicSimulator } from '../../../simulators/src';
import { createNativeTranslator } from '../create-native-translator';
import { collect, collectUntilError, expectTypedFailure } from '../testing/collect';
import { useSimulatedUpstream } from '../testing/simulated-upstream';
import { ANTHROPIC_VERSION } from './anthropic-http';
import { AnthropicMessagesTranslator } from './anthropic-messages-translator';
import { anthropicFixtures } from './fixtures/simulator-fixtures';
import * as recorded from './fixtures/recorded-anthropic-shapes';

const nativeBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 64,
  system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
  metadata: { user_id: 'u-1' },
  ...extra,
});
const native = (model: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): NativeRequest => ({ body: nativeBody(model, extra), headers });

/** The events of a recorded stream, as the SSE reader hands them on. */
function recordedEvents(stream: string): NativeEvent[] {
  return stream
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine.slice('event: '.length), data: dataLine.slice('data: '.length) };
    });
}

describe('AnthropicMessagesTranslator against the Anthropic simulator', () => {
  const up = useSimulatedUpstream({
    start: () => startAnthropicSimulator({ fixtures: anthropicFixtures }),
    create: (pools) => new AnthropicMessagesTranslator(pools),
    target: { apiKey: 'sk-ant-upstream', providerModel: 'unused-for-native' },
  });

  it('is what the factory creates for messages:anthropic', () => {
    const created = createNativeTranslator('messages', 'anthropic');
    expect(created).toBeInstanceOf(AnthropicMessagesTranslator);
    expect(created?.api).toBe('messages');
  });

  describe('call', () => {
    it('forwards the client body as given with the gateway credential and the default version', async () => {
      const req = native('claude-sonnet-4-5');
      await up.provider.call(req, up.target);
      const { headers, body } = up.sim.lastRequest!;
      expect(body).toBe(JSON.stringify(req.body));
      expect(headers).toMatchObject({ 'x-api-key': 'sk-ant-upstream', 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' });
    });

    it("lets the client's anthropic-version and anthropic-beta win, and nothing else of its headers", async () => {
      const headers = { 'Anthropic-Version': '2099-01-01', 'anthropic-beta': 'prompt-caching-2024-07-31', 'x-api-key': 'client-key', authorization: 'Bearer client' };
      await up.provider.call(native('claude-sonnet-4-5', {}, headers), up.target);
      expect(up.sim.lastRequest!.headers).toMatchObject({ 'anthropic-version': '2099-01-01', 'anthropic-beta': 'prompt-caching-2024-07-31', 'x-api-key': 'sk-ant-upstream' });
      expect(up.sim.lastRequest!.headers.authorization).toBeUndefined();
    });

    it('drops a stream flag that disagrees with the call, and nothing else', async () => {
      await up.provider.call(native('claude-sonnet-4-5', { stream: true }), up.target);
      expect(up.sim.lastRequest!.body).toBe(JSON.stringify(nativeBody('claude-sonnet-4-5')));
    });

    it('returns the answer with usage, id and served model', async () => {
      const res = await up.provider.call(native('claude-sonnet-4-5'), up.target);
      expect(res).toEqual({
        status: 200,
        body: expect.objectContaining({ type: 'message', content: [{ type: 'text', text: 'Echo: hello there' }] }),
        usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, provider_request_id: expect.stringMatching(/^req_sim/) },
        providerResponseId: expect.stringMatching(/^msg_sim/),
        servedModel: `claude-sonnet-4-5${SNAPSHOT_SUFFIX}`,
      });
      expect(res.providerResponseId).toBe((res.body as { id: string }).id);
    });

    it.each([
      ['text message', 'text-message', recorded.textMessage, { prompt_tokens: 2363, completion_tokens: 9, total_tokens: 2372 }],
      ['thinking message', 'thinking-message', recorded.thinkingMessage, { prompt_tokens: 40, completion_tokens: 120, total_tokens: 160 }],
    ])('keeps a recorded %s byte-for-byte equivalent and reads its usage', async (_name, fixture, body, usage) => {
      const res = await up.provider.call(native(`sim-fixture-${fixture}`), up.target);
      expect(JSON.stringify(res.body)).toBe(anthropicFixtures[fixture].body);
      expect(res.body).toEqual(body);
      expect(res).toMatchObject({ usage: { ...usage, provider_request_id: 'req_recorded' }, providerResponseId: body.id, servedModel: body.model });
    });
  });

  describe('stream', () => {
    it('forwards the recorded events untouched and reads usage, id and model', async () => {
      const stream = await up.provider.stream(native('sim-fixture-text-stream', { stream: true }), up.target);
      expect(await collect(stream.events)).toEqual(recordedEvents(recorded.textStream));
      expect(stream.usage()).toEqual({ prompt_tokens: 35, completion_tokens: 15, total_tokens: 50, provider_request_id: 'req_recorded' });
      expect(stream.providerResponseId()).toBe('msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY');
      expect(stream.servedModel()).toBe('claude-opus-4-1-20250805');
    });

    it('ends at message_stop while the provider still holds its body open', async () => {
      const stream = await up.provider.stream(native('sim-fixture-held-open-stream', { stream: true }), up.target);
      const waited = new Promise<'waited'>((resolve) => setTimeout(resolve, 2_000, 'waited').unref());
      expect(await Promise.race([collect(stream.events), waited])).toEqual(recordedEvents(recorded.textStream));
      expect(stream.usage()).toMatchObject({ prompt_tokens: 35, completion_tokens: 15 });
    });

    it('reads cumulative usage from message_delta and passes unknown events on', async () => {
      const thinking = await up.provider.stream(native('sim-fixture-thinking-stream'), up.target);
      expect(await collect(thinking.events)).toEqual(recordedEvents(recorded.thinkingStream));
      expect(thinking.usage()).toMatchObject({ prompt_tokens: 40, completion_tokens: 130, total_tokens: 170 });

      const future = await up.provider.stream(native('sim-fixture-future-event-stream'), up.target);
      expect((await collect(future.events)).map((e) => e.event)).toContain('message_annotation');
    });

    it("streams the simulator's event sequence, asking for a stream even if the body did not", async () => {
      const stream = await up.provider.stream(native('claude-sonnet-4-5'), up.target);
      const events = await collect(stream.events);
      expect(JSON.parse(up.sim.lastRequest!.body)).toEqual({ ...nativeBody('claude-sonnet-4-5'), stream: true });
      expect(events.map((e) => e.event)).toEqual([
        'message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_delta',
        'content_block_stop', 'message_delta', 'message_stop',
      ]);
      expect(stream.usage()).toMatchObject({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
      expect(stream.servedModel()).toBe(`claude-sonnet-4-5${SNAPSHOT_SUFFIX}`);
    });

    it.each([
      ['an overloaded error event', 'sim-fixture-mid-stream-error', UpstreamError, true],
      ['a rate limit error event', 'sim-fixture-mid-stream-rate-limit', RateLimitError, true],
      ['a body that ends before message_stop', 'sim-fixture-truncated-stream', UpstreamError, true],
      ['a connection dropped mid-stream', 'sim-drop', UpstreamError, true],
    ])('ends with a typed error, and no upstream error event forwarded, on %s', async (_name, model, type, retryable) => {
      const stream = await up.provider.stream(native(model), up.target);
      const { received, error } = await collectUntilError(stream.events);
      expect(received[0].event).toBe('message_start');
      expect(received.some((e) => e.event === 'error')).toBe(false);
      expect(error).toBeInstanceOf(type);
      expect(isRetryableUpstreamError(error)).toBe(retryable);
    });

    it('forwards content events without parsing them, but fails on a message_start it cannot read', async () => {
      const unparsed = await up.provider.stream(native('sim-fixture-invalid-json-stream'), up.target);
      const cut = await collectUntilError(unparsed.events);
      expect(cut.received.at(-1)?.data).toBe('{"type": "content_block_delta", "index": 0,');
      expect((cut.error as Error).message).toMatch(/ended before/);

      const malformed = await up.provider.stream(native('sim-fixture-malformed-message-start-stream'), up.target);
      const { received, error } = await collectUntilError(malformed.events);
      expect(received).toEqual([]);
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as Error).message).toContain('malformed');
      expect(isRetryableUpstreamError(error)).toBe(false);
    });
  });

  describe('countTokens', () => {
    it("asks the provider's count endpoint with the body less max_tokens, and returns its count", async () => {
      const { max_tokens: _cap, metadata: _meta, ...prompt } = nativeBody('claude-sonnet-4-5');
      const counted = await up.provider.countTokens!({ body: prompt, headers: {} }, up.target);
      const answered = await up.provider.call(native('claude-sonnet-4-5'), up.target);
      expect(counted).toBe(answered.usage.prompt_tokens);
      expect(counted).toBeGreaterThan(0);
    });

    it("maps the provider's refusal like any other call", async () => {
      const err = await up.provider.countTokens!({ body: { model: 'claude-sonnet-4-5', messages: [] }, headers: {} }, up.target).catch((e: unknown) => e);
      expectTypedFailure(err, InputError, { status: 400 }, false);
    });
  });

  describe('failures before the first byte', () => {
    const failures: Array<[string, string, new (...args: never[]) => GatewayError, Record<string, unknown>, boolean]> = [
      ['400', 'sim-error-400', InputError, { status: 400 }, false],
      ['401', 'sim-error-401', UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
      ['429 with Retry-After', 'sim-fixture-rate-limit-429', RateLimitError, { status: 429, headers: { 'retry-after': '20' } }, true],
      ['529 overloaded', 'sim-error-529', UpstreamError, { status: 502, upstreamStatus: 529 }, true],
    ];
    it.each(failures)('%s', async (_name, model, type, fields, retryable) => {
      for (const method of ['call', 'stream'] as const) {
        const err = await up.provider[method](native(model), up.target).catch((e: unknown) => e);
        expectTypedFailure(err, type, fields, retryable);
      }
    });

    it('reports a 200 answer that is not a message as malformed', async () => {
      const err = await up.provider.call(native('sim-fixture-malformed-message'), up.target).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as Error).message).toContain('malformed');
    });
  });
});
