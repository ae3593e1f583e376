import { GatewayError, InputError, NotFoundError, RateLimitError, TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, readServerSentEvents, type NativeEvent, type NativeRequest } from '@gw/provider-spec';
// The simulator is this package's upstream in tests; imported by path to keep it out of the runtime deps.
import { startOpenAISimulator, SNAPSHOT_SUFFIX, type SimulatorFixture } from '../../../simulators/src';
import { createNativeTranslator } from '../create-native-translator';
import { OriginPools } from '../http/origin-pools';
import { collect, collectUntilError, expectTypedFailure } from '../testing/collect';
import { useSimulatedUpstream } from '../testing/simulated-upstream';
import * as errors from './fixtures/recorded-openai-shapes';
import { json, stream } from './fixtures/simulator-fixtures';
import * as recorded from './openai-responses-recorded-shapes';
import { OpenAIResponsesTranslator } from './openai-responses-translator';

const fixtures: Record<string, SimulatorFixture> = {
  'text-response': json(200, recorded.textResponse, { 'x-request-id': 'req_recorded' }),
  'no-id-response': json(200, { object: 'response', model: 'x' }),
  'not-json-response': json(200, '<html>ok</html>'),
  'context-length-400': json(400, errors.contextLengthErrorBody),
  'quota-429': json(429, errors.insufficientQuotaErrorBody),
  'text-stream': stream(recorded.textStream),
  'incomplete-stream': stream(recorded.incompleteStream),
  'failed-stream': stream(recorded.failedStream),
  'error-event-stream': stream(recorded.errorEventStream),
  'data-only-stream': stream(recorded.dataOnlyStream),
  'truncated-stream': stream(recorded.truncatedStream),
  'dropped-stream': stream(recorded.truncatedStream, { dropConnection: true }),
  'malformed-lifecycle-stream': stream(recorded.malformedLifecycleStream),
  // Everything up to response.completed at once, and the body's end a minute later.
  'held-open-stream': stream(recorded.textStream, { endAfterMs: 60_000 }),
};

const request = (input: string, extra: Record<string, unknown> = {}): NativeRequest => ({ body: { model: 'gpt-4o-mini', input, ...extra }, headers: {} });

/** The recorded stream as the translator must hand it on: every event name and data, byte for byte. */
async function recordedEvents(body: string): Promise<NativeEvent[]> {
  const out: NativeEvent[] = [];
  for await (const e of readServerSentEvents([new TextEncoder().encode(body)] as unknown as AsyncIterable<Uint8Array>)) {
    out.push(e.event === undefined ? { data: e.data } : { event: e.event, data: e.data });
  }
  return out;
}

describe('OpenAIResponsesTranslator against the OpenAI simulator', () => {
  const up = useSimulatedUpstream({
    start: () => startOpenAISimulator({ fixtures }),
    create: (pools) => new OpenAIResponsesTranslator(pools),
    target: { apiKey: 'sk-upstream', providerModel: 'gpt-4o-mini' },
  });
  const { withModel } = up;

  it('is what createNativeTranslator serves for responses over openai-compatible, and nothing else', () => {
    expect(createNativeTranslator('responses', 'openai-compatible')).toBeInstanceOf(OpenAIResponsesTranslator);
    expect(createNativeTranslator('responses', 'no-such-kind')).toBeNull();
  });

  describe('call', () => {
    it('returns the body untouched with usage in both namings, the response id and the served model', async () => {
      const res = await up.provider.call(request('hello there', { stream: false }), up.target);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'response', status: 'completed', output_text: 'Echo: hello there', store: true });
      expect(res.providerResponseId).toMatch(/^resp_sim/);
      expect(res.providerResponseId).toBe((res.body as { id: string }).id);
      expect(res.servedModel).toBe(`gpt-4o-mini${SNAPSHOT_SUFFIX}`);
      expect(res.usage).toEqual({
        input_tokens: 2, output_tokens: 3, total_tokens: 5, prompt_tokens: 2, completion_tokens: 3,
        provider_request_id: expect.stringMatching(/^req_sim/),
      });
    });

    it('passes a recorded OpenAI Response through exactly', async () => {
      const res = await up.provider.call(request('hi'), withModel('sim-fixture-text-response'));
      expect(res.body).toEqual(recorded.textResponse);
      expect(res.usage).toEqual({ input_tokens: 36, output_tokens: 87, total_tokens: 123, prompt_tokens: 36, completion_tokens: 87, provider_request_id: 'req_recorded' });
      expect(res).toMatchObject({ providerResponseId: recorded.textResponse.id, servedModel: 'gpt-4.1-2025-04-14' });
    });
  });

  describe('stream', () => {
    it('passes the simulator stream through, ending with response.completed, and reads usage, id and model', async () => {
      const s = await up.provider.stream(request('hi you'), up.target);
      const events = await collect(s.events);
      expect(events[0].event).toBe('response.created');
      expect(events.at(-1)!.event).toBe('response.completed');
      for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
      expect(s.usage()).toEqual({ input_tokens: 2, output_tokens: 3, total_tokens: 5, prompt_tokens: 2, completion_tokens: 3, provider_request_id: expect.stringMatching(/^req_sim/) });
      expect(s.providerResponseId()).toMatch(/^resp_sim/);
      expect(s.servedModel()).toBe(`gpt-4o-mini${SNAPSHOT_SUFFIX}`);
    });

    it.each([
      ['a recorded stream', 'text-stream', recorded.textStream, { input_tokens: 36, output_tokens: 87 }],
      ['a stream cut at max_output_tokens (response.incomplete)', 'incomplete-stream', recorded.incompleteStream, { input_tokens: 36, output_tokens: 16 }],
      ['a failed response (response.failed), without usage', 'failed-stream', recorded.failedStream, null],
      ['the provider error event, which ends the stream', 'error-event-stream', recorded.errorEventStream, null],
      ['a stream without event: lines', 'data-only-stream', recorded.dataOnlyStream, { input_tokens: 36, output_tokens: 87 }],
    ])('passes %s through byte for byte', async (_name, fixture, body, usage) => {
      const s = await up.provider.stream(request('hi'), withModel(`sim-fixture-${fixture}`));
      expect(await collect(s.events)).toEqual(await recordedEvents(body));
      expect(s.usage()).toEqual(usage === null ? null : expect.objectContaining(usage));
      expect(s.providerResponseId()).toBe('resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b');
      expect(s.servedModel()).toBe('gpt-4.1-2025-04-14');
    });

    it.each([
      ['a body that ends without a terminal event', 'truncated-stream', /ended before/, true],
      ['a connection dropped mid-stream', 'dropped-stream', /./, true],
      ['a lifecycle event that fails the schema', 'malformed-lifecycle-stream', /malformed/, false],
    ])('ends with an UpstreamError on %s', async (_name, fixture, message, retryable) => {
      const s = await up.provider.stream(request('hi'), withModel(`sim-fixture-${fixture}`));
      const { error } = await collectUntilError(s.events);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ status: 502, message: expect.stringMatching(message) });
      expect(isRetryableUpstreamError(error)).toBe(retryable);
    });

    it('hands on the events sent before the provider cut the stream, though the cut came before they were read', async () => {
      const s = await up.provider.stream(request('x y z'), withModel('sim-drop'));
      // A busy gateway: the events and the cut have both arrived before the stream is read.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { received, error } = await collectUntilError(s.events);
      expect(received.map((e) => e.event)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(isRetryableUpstreamError(error)).toBe(true);
    });

    it('ends at response.completed while the provider still holds its body open', async () => {
      const s = await up.provider.stream(request('hi'), withModel('sim-fixture-held-open-stream'));
      const waited = new Promise<'waited'>((resolve) => setTimeout(resolve, 2_000, 'waited').unref());
      expect(await Promise.race([collect(s.events), waited])).toEqual(await recordedEvents(recorded.textStream));
      expect(s.usage()).toEqual(expect.objectContaining({ input_tokens: 36, output_tokens: 87 }));
    });

    it('releases the connection when the caller stops early, even before the first event', async () => {
      const single = new OpenAIResponsesTranslator(new OriginPools({ connections: 1 }));
      try {
        const first = await single.stream(request('one two three'), up.target);
        for await (const _ of first.events) break;
        const second = await single.stream(request('one two three'), up.target);
        await second.events[Symbol.asyncIterator]().return?.();
        const third = await single.stream(request('one two three'), up.target);
        expect((await collect(third.events)).at(-1)!.event).toBe('response.completed');
      } finally {
        await single.close();
      }
    });
  });

  describe('upstream failures before the first byte', () => {
    const failures: Array<[string, string, new (...args: never[]) => GatewayError, Record<string, unknown>, boolean]> = [
      ['simulated 400', 'sim-error-400', InputError, { status: 400, param: 'input' }, false],
      ['recorded context length 400', 'sim-fixture-context-length-400', InputError, { status: 400, code: 'context_length_exceeded' }, false],
      ['simulated 401', 'sim-error-401', UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
      ['simulated 404', 'sim-error-404', NotFoundError, { status: 404, code: 'model_not_found' }, false],
      ['simulated 429', 'sim-error-429', RateLimitError, { status: 429, headers: { 'retry-after': '1' } }, true],
      ['recorded insufficient quota 429', 'sim-fixture-quota-429', UpstreamError, { status: 502, code: 'upstream_insufficient_balance' }, false],
      ['simulated 500', 'sim-error-500', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 500 }, true],
      ['simulated 504', 'sim-error-504', TimeoutError, { status: 504 }, true],
      ['a 200 without an id', 'sim-fixture-no-id-response', UpstreamError, { status: 502, message: expect.stringContaining('malformed') }, false],
      ['a 200 that is not JSON', 'sim-fixture-not-json-response', UpstreamError, { status: 502, message: expect.stringContaining('malformed') }, false],
    ];

    it.each(failures)('call: %s', async (_name, model, type, fields, retryable) => {
      const err = await up.provider.call(request('hi'), withModel(model)).catch((e: unknown) => e);
      expectTypedFailure(err, type, fields, retryable);
    });

    it.each(failures.filter(([, model]) => !model.includes('response')))('stream: %s', async (_name, model, type, fields, retryable) => {
      const err = await up.provider.stream(request('hi'), withModel(model)).catch((e: unknown) => e);
      expectTypedFailure(err, type, fields, retryable);
    });

    it('reports a missing gateway credential as upstream_auth_error', async () => {
      const err = await up.provider.call(request('hi'), withModel('gpt-4o-mini', { apiKey: undefined })).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 502, code: 'upstream_auth_error' });
    });

    it.each(['call', 'stream'] as const)('%s: times out with a retryable TimeoutError', async (method) => {
      const slow = withModel('gpt-4o-mini', { timeoutMs: 100, extraHeaders: { 'x-sim-latency-ms': '1000' } });
      const err = await up.provider[method](request('hi'), slow).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TimeoutError);
      expect(isRetryableUpstreamError(err)).toBe(true);
    });
  });
});
