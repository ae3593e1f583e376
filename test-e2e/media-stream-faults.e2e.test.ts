import { usdToMicros } from '@gw/platform';
import { api, spendableMicros } from './harness/api';
import { E2E_SPEECH_MODEL } from './harness/media-catalog';
import { waitFor } from './harness/ports';
import { useStack } from './harness/stack';

jest.setTimeout(240_000);

/** The speech simulator's WAV: 24 kHz, 16-bit mono PCM after a 44-byte header. */
const WAV_BYTES_PER_SECOND = 48_000;
const WAV_HEADER_BYTES = 44;
/** The longest input speech takes: over four minutes of audio, sent in 16 KiB pieces for several seconds. */
const LONG_INPUT = 'a slow and careful reading of a long text. '.repeat(95).slice(0, 4096);

interface ClientAudio {
  requestId: string;
  bytes: number;
  /** Resolves when the body ends (ok) or breaks off (not ok). */
  ended: Promise<{ ok: boolean }>;
}

/** A speech stream through the edge, read by hand so the test sees how much audio arrived and how it ended. */
async function openSpeech(baseURL: string, key: string): Promise<ClientAudio> {
  const res = await fetch(`${baseURL}/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: E2E_SPEECH_MODEL, input: LONG_INPUT, voice: 'alloy', response_format: 'wav' }),
  });
  expect(res.status).toBe(200);
  const audio: ClientAudio = { requestId: res.headers.get('x-request-id')!, bytes: 0, ended: Promise.resolve({ ok: false }) };
  audio.ended = (async () => {
    try {
      for await (const part of res.body!) audio.bytes += (part as Uint8Array).length;
      return { ok: true };
    } catch {
      return { ok: false };
    }
  })();
  return audio;
}

describe('media killed while streaming (processes)', () => {
  const stack = useStack('processes');

  test('a speech stream cut by kill -9 is billed once after a new media starts: the audio sent, from the journal', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const audio = await openSpeech(stack.baseURL, stack.key);
    const startedAt = Date.now();
    // Past the journal's first progress checkpoint (1 s), well before the audio's end.
    await waitFor('audio flowing for two seconds', async () => Date.now() - startedAt > 2_000 && audio.bytes > 10 * WAV_BYTES_PER_SECOND, 60_000);

    await stack.processes!.kill('media');
    const ending = await audio.ended;
    expect(ending.ok).toBe(false);
    const receivedSeconds = (audio.bytes - WAV_HEADER_BYTES) / WAV_BYTES_PER_SECOND;
    expect(receivedSeconds).toBeLessThan((LONG_INPUT.length / 15) - 10);

    // Nothing bills the call while no media process runs.
    expect((await api(stack.baseURL, 'GET', `/billing/requests/${audio.requestId}`, { key: stack.key })).status).toBe(404);
    await stack.processes!.start('media');
    // The dead process's lease lapses, then the new process's sweeper bills the open call.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let record: any;
    await waitFor('the cut stream billed', async () => {
      const res = await api(stack.baseURL, 'GET', `/billing/requests/${audio.requestId}`, { key: stack.key });
      record = res.body.data;
      return res.status === 200;
    }, 120_000);
    expect(record).toMatchObject({ request_id: audio.requestId, api_type: 'speech', model: E2E_SPEECH_MODEL, streamed: true, status: 'failed', usage_estimated: true });
    // What the journal last saw sent: some of the audio, never more than reached the client.
    const billedSeconds: number = record.usage.audio_duration_seconds;
    expect(billedSeconds).toBeGreaterThan(0);
    expect(billedSeconds).toBeLessThanOrEqual(receivedSeconds);

    // Once: the balance falls by exactly this charge, and the call's hold is settled by it.
    const charged = usdToMicros(record.charged_cost);
    expect(charged).toBeGreaterThan(0);
    await waitFor('the charge applied to the balance', async () => before - (await spendableMicros(stack.baseURL, stack.key)) === charged, 30_000);
  });
});
