import { usdToMicros } from '@gw/platform';
import { api, spendableMicros } from './harness/api';
import { E2E_TRICKLE_MESSAGES_MODEL, E2E_TRICKLE_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useStack } from './harness/stack';

jest.setTimeout(240_000);

/** A stream's end must reach the client this soon after the process serving it died. */
const END_BOUND_MS = 10_000;

interface ClientStream {
  api: 'chat' | 'messages';
  requestId: string;
  /** Everything received so far. */
  text: string;
  /** Resolves when the body ends (ok) or breaks off (not ok). */
  ended: Promise<{ ok: boolean; at: number }>;
}

/** A chat or messages stream of a long answer, read by hand so the test sees exactly how it ends. */
async function openStream(baseURL: string, key: string, api: ClientStream['api'], prompt: string): Promise<ClientStream> {
  const messages = [{ role: 'user', content: prompt }];
  const res = await fetch(`${baseURL}${api === 'chat' ? '/chat/completions' : '/messages'}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(api === 'chat'
      ? { model: E2E_TRICKLE_MODEL, stream: true, messages }
      : { model: E2E_TRICKLE_MESSAGES_MODEL, stream: true, max_tokens: 1000, messages }),
  });
  expect(res.status).toBe(200);
  const stream: ClientStream = { api, requestId: res.headers.get('x-request-id')!, text: '', ended: Promise.resolve({ ok: false, at: 0 }) };
  const decoder = new TextDecoder();
  stream.ended = (async () => {
    try {
      for await (const part of res.body!) stream.text += decoder.decode(part, { stream: true });
      return { ok: true, at: Date.now() };
    } catch {
      return { ok: false, at: Date.now() };
    }
  })();
  return stream;
}

/** Pieces of generated text received so far. */
const textPieces = (s: ClientStream) => (s.text.match(s.api === 'chat' ? /"content":"/g : /"text_delta"/g) ?? []).length;

/** The last event must be the format's own error event (API-NOTES, Streaming). */
function expectErrorEventAtEnd(s: ClientStream): void {
  const events = s.text.split('\n\n').filter((e) => e.length > 0);
  expect(events.length).toBeGreaterThan(12);
  const last = events.at(-1)!;
  if (s.api === 'chat') {
    expect(last.startsWith('data: ')).toBe(true);
    expect(JSON.parse(last.slice('data: '.length))).toMatchObject({ code: '503', error: { type: 'service_unavailable_error' } });
    expect(s.text).not.toContain('[DONE]');
  } else {
    expect(last).toMatch(/^event: error\ndata: /);
    expect(JSON.parse(last.split('\ndata: ')[1])).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(s.text).not.toContain('message_stop');
  }
}

describe('inference killed while streaming (processes)', () => {
  const stack = useStack('processes');

  test('each chat and messages stream ends with its error event, and each call is billed once with estimated usage after a new inference starts', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    // ~150 words at one chunk per 200 ms: half a minute of stream, so every one is in flight at the kill.
    const prompt = Array.from({ length: 150 }, (_, i) => `word${i}`).join(' ');
    const apis = ['chat', 'chat', 'chat', 'messages'] as const;
    const streams = await Promise.all(apis.map((a) => openStream(stack.baseURL, stack.key, a, prompt)));
    // Words flowing for over two seconds: past the journal's first progress checkpoint.
    await waitFor('every stream mid-way', async () => streams.every((s) => textPieces(s) >= 12), 60_000);

    const killedAt = Date.now();
    await stack.processes!.kill('inference');
    const endings = await Promise.all(streams.map((s) => s.ended));
    for (const [i, ending] of endings.entries()) {
      expect(ending.ok).toBe(true);
      expect(ending.at - killedAt).toBeLessThan(END_BOUND_MS);
      expectErrorEventAtEnd(streams[i]);
    }

    await stack.processes!.start('inference');
    // The dead instance's lease lapses, then the new instance's sweeper bills each open call.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const records: any[] = [];
    await waitFor('each cut stream billed', async () => {
      records.length = 0;
      for (const s of streams) {
        const res = await api(stack.baseURL, 'GET', `/billing/requests/${s.requestId}`, { key: stack.key });
        if (res.status !== 200) return false;
        records.push(res.body.data);
      }
      return true;
    }, 120_000);
    for (const [i, record] of records.entries()) {
      expect(record).toMatchObject({ request_id: streams[i].requestId, api_type: streams[i].api, streamed: true, status: 'failed', usage_estimated: true });
      expect(record.usage.prompt_tokens).toBeGreaterThan(0);
      expect(record.usage.completion_tokens).toBeGreaterThan(0);
    }
    // Once each: the balance falls by exactly the sum of the charges.
    const charged = records.reduce((sum, r) => sum + usdToMicros(r.charged_cost), 0);
    expect(charged).toBeGreaterThan(0);
    await waitFor('the charges applied to the balance', async () => before - (await spendableMicros(stack.baseURL, stack.key)) === charged, 30_000);
  });
});
