// Test-only: tests every chat provider shares, since they share the transport (see http/upstream-call.ts,
// http/post-upstream.ts and http/translate-event-stream.ts).
import { TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type ChatCompletionChunk, type ChatCompletionRequest, type ChatProvider } from '@gw/provider-spec';
import { OriginPools } from '../http/origin-pools';
import { collect } from './collect';
import type { SimulatedUpstream, SimulatorHandle } from './simulated-upstream';

const methods = ['chat', 'chatStream'] as const;
const user = (content: string): ChatCompletionRequest['messages'] => [{ role: 'user', content }];
const text = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

/**
 * Defines, in the calling describe block, the tests of what every chat provider maps alike, for `chat` and
 * `chatStream`: a timeout, a refused connection, and the caller's cancellation.
 */
export function itMapsTransportFailures(
  up: SimulatedUpstream<SimulatorHandle, ChatProvider>,
  options: { model: string; startSimulator: () => Promise<SimulatorHandle> },
): void {
  const ask = (method: (typeof methods)[number]): ChatCompletionRequest => ({ model: 'x', messages: user('hi'), stream: method === 'chatStream' });

  it.each(methods)('%s: times out with a retryable TimeoutError', async (method) => {
    const slow = up.withModel(options.model, { timeoutMs: 100, extraHeaders: { 'X-Sim-Latency-Ms': '1000' } });
    const started = performance.now();
    const err = await up.provider[method](ask(method), slow).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(isRetryableUpstreamError(err)).toBe(true);
    expect(performance.now() - started).toBeLessThan(900);
  });

  it.each(methods)('%s: a refused connection is a retryable 502', async (method) => {
    const closed = await options.startSimulator();
    await closed.close();
    const err = await up.provider[method](ask(method), up.withModel(options.model, { baseUrl: closed.baseUrl })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(isRetryableUpstreamError(err)).toBe(true);
  });

  it.each(methods)('%s: rethrows the caller cancellation as the caller reason', async (method) => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    const call = up.provider[method](ask(method), up.withModel(options.model, { extraHeaders: { 'x-sim-latency-ms': '1000' } }), controller.signal);
    setTimeout(() => controller.abort(reason), 30);
    await expect(call).rejects.toBe(reason);
  });
}

/**
 * Defines, in the calling describe block, the tests of how every chat provider uses its connection pools: a
 * stream left early gives its connection back, and sequential calls share keep-alive connections.
 */
export function itReusesConnections(up: SimulatedUpstream<SimulatorHandle & { url: string }, ChatProvider>): void {
  it('releases the connection when the caller stops early, even before the first chunk', async () => {
    const single = up.create(new OriginPools({ connections: 1 }));
    try {
      const req: ChatCompletionRequest = { model: 'x', messages: user('one two three'), stream: true };
      const first = await single.chatStream(req, up.target);
      for await (const _ of first.chunks) break;
      const second = await single.chatStream(req, up.target);
      await second.chunks[Symbol.asyncIterator]().return?.();
      const third = await single.chatStream(req, up.target);
      expect(text(await collect(third.chunks))).toBe('Echo: one two three');
    } finally {
      await single.close?.();
    }
  });

  it('reuses keep-alive connections for sequential calls, streamed or not', async () => {
    const own = new OriginPools();
    const p = up.create(own);
    try {
      for (let i = 0; i < 5; i++) {
        await p.chat({ model: 'x', messages: user('a') }, up.target);
        const { chunks } = await p.chatStream({ model: 'x', messages: user('b'), stream: true }, up.target);
        await collect(chunks);
      }
      // undici may open a second socket when a call is dispatched just before the previous one is released.
      expect(own.forOrigin(up.sim.url).stats.connected).toBeLessThanOrEqual(2);
    } finally {
      await p.close?.();
    }
  });
}
