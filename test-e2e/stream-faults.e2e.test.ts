import { usdToMicros } from '@gw/platform';
import { api, spendableMicros } from './harness/api';
import { E2E_TRICKLE_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useStack } from './harness/stack';

jest.setTimeout(240_000);

/** A stream's end must reach the client this soon after the process serving it died. */
const END_BOUND_MS = 10_000;

interface ClientStream {
  requestId: string;
  /** Everything received so far. */
  text: string;
  /** Resolves when the body ends (ok) or breaks off (not ok). */
  ended: Promise<{ ok: boolean; at: number }>;
}

async function openChatStream(baseURL: string, key: string, prompt: string): Promise<ClientStream> {
  const res = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: E2E_TRICKLE_MODEL, stream: true, messages: [{ role: 'user', content: prompt }] }),
  });
  expect(res.status).toBe(200);
  const stream: ClientStream = { requestId: res.headers.get('x-request-id')!, text: '', ended: Promise.resolve({ ok: false, at: 0 }) };
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

const contentChunks = (s: ClientStream) => (s.text.match(/"content":"/g) ?? []).length;

describe('inference killed while streaming (processes)', () => {
  const stack = useStack('processes');

  test('each stream ends with an error event, and each call is billed once with estimated usage after a new inference starts', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    // ~150 words at one chunk per 200 ms: half a minute of stream, so every one is in flight at the kill.
    const prompt = Array.from({ length: 150 }, (_, i) => `word${i}`).join(' ');
    const streams = await Promise.all([0, 1, 2].map(() => openChatStream(stack.baseURL, stack.key, prompt)));
    // Words flowing for over a second: past the journal's first progress checkpoint.
    await waitFor('every stream mid-way', async () => streams.every((s) => contentChunks(s) >= 12), 60_000);

    const killedAt = Date.now();
    await stack.processes!.kill('inference');
    const endings = await Promise.all(streams.map((s) => s.ended));
    for (const [i, ending] of endings.entries()) {
      expect(ending.ok).toBe(true);
      expect(ending.at - killedAt).toBeLessThan(END_BOUND_MS);
      const events = streams[i].text.split('\n\n').filter((e) => e.length > 0);
      expect(events.length).toBeGreaterThan(12);
      const last = events.at(-1)!;
      expect(last.startsWith('data: ')).toBe(true);
      expect(JSON.parse(last.slice('data: '.length))).toMatchObject({ code: '503', error: { type: 'service_unavailable_error' } });
      expect(streams[i].text).not.toContain('[DONE]');
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
      expect(record).toMatchObject({ request_id: streams[i].requestId, model: E2E_TRICKLE_MODEL, streamed: true, status: 'failed', usage_estimated: true });
      expect(record.usage.prompt_tokens).toBeGreaterThan(0);
      expect(record.usage.completion_tokens).toBeGreaterThan(0);
    }
    // Once each: the balance falls by exactly the sum of the three charges.
    const charged = records.reduce((sum, r) => sum + usdToMicros(r.charged_cost), 0);
    expect(charged).toBeGreaterThan(0);
    await waitFor('the charges applied to the balance', async () => before - (await spendableMicros(stack.baseURL, stack.key)) === charged, 30_000);
  });
});
