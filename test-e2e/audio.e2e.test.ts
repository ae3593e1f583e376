import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { toFile } from 'openai';
import { wavDurationSeconds } from '@gw/provider-spec';
import { selfSignedCert, startTlsReceiver, type TlsReceiver } from '@gw/net-guard/src/testing/tls-receiver';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest } from './harness/api';
import { E2E_ESPEAK_MODEL, E2E_IMAGE_MODEL, E2E_POCKETSPHINX_MODEL, E2E_SPEECH_MODEL, E2E_TRANSCRIBE_MODEL } from './harness/media-catalog';
import { useStack } from './harness/stack';

jest.setTimeout(120_000);

const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const OTHER = 'acct_e2e_audio_other';

/** A real spoken WAV, made on this machine with espeak-ng (installed by scripts/system-packages.sh). */
function spokenWav(dir: string, text: string): Buffer {
  const file = path.join(dir, 'spoken.wav');
  const run = spawnSync('espeak-ng', ['-v', 'en-us', '-w', file, text]);
  if (run.error || run.status !== 0) throw new Error(`espeak-ng is needed for this test (bash scripts/system-packages.sh installs it): ${run.error?.message ?? run.stderr}`);
  return readFileSync(file);
}

describe('audio through the edge (processes: Kafka + MongoDB-wire)', () => {
  // The test HTTPS server's self-signed certificate is written before the stack starts; media trusts it
  // (test-only MEDIA_EXTRA_CA_FILE) and may fetch from loopback (test-only switch).
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-e2e-audio-'));
  const caFile = path.join(dir, 'server.pem');
  let server: TlsReceiver;
  let wav: Buffer;
  beforeAll(async () => {
    const pems = await selfSignedCert();
    writeFileSync(caFile, pems.cert);
    server = await startTlsReceiver(pems);
    wav = spokenWav(dir, SENTENCE);
  });
  const stack = useStack('processes', {
    env: { GATEWAY_ALLOW_LOOPBACK_CALLBACKS: 'true', MEDIA_EXTRA_CA_FILE: caFile, MEDIA_AUDIO_MAX_BYTES: String(2 * 1024 * 1024) },
    accounts: [{ id: OTHER, credit_usd: '5' }],
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const call = (method: string, p: string, body?: unknown, headers: Record<string, string> = {}, key = stack.key) => api(stack.baseURL, method, p, { key, body, headers });
  const seconds = () => wavDurationSeconds(wav)!;

  it('transcribes a real spoken WAV (openai client, multipart), billed per second of audio', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const res = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }) }).withResponse();
    // The e2e model is the simulated recognizer: it measures the audio, it recognizes no words.
    expect(res.data.text).toBe(`Simulated transcription of ${Math.round(seconds() * 100) / 100} seconds of audio.`);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, res.response.headers.get('x-request-id')!);
    expect(record).toMatchObject({ api_type: 'transcription', usage: { audio_duration_seconds: Math.ceil(seconds()) } });
    expect(before - await spendableMicros(stack.baseURL, stack.key)).toBe(Math.ceil(seconds()) * 1000);
    expect((await call('GET', `/billing/requests/${encodeURIComponent(record.id)}`)).body.data.request_id).toBe(record.request_id);
  });

  it('verbose_json has segments; text, srt and vtt answer the transcript itself; streaming sends deltas then done', async () => {
    const verbose = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }), response_format: 'verbose_json', timestamp_granularities: ['segment'] });
    expect(verbose).toMatchObject({ task: 'transcribe', language: 'english', duration: expect.any(Number), segments: [{ id: 0, start: 0 }, { id: 1 }] });
    const text = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }), response_format: 'srt' });
    expect(String(text)).toMatch(/^1\n00:00:00,000 --> /);
    const stream = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }), stream: true });
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    expect(types.at(-1)).toBe('transcript.text.done');
    expect(types.filter((t) => t === 'transcript.text.delta').length).toBeGreaterThan(3);
  });

  it('file_url is fetched through the guard (mime_type required and checked); inline audio_data works', async () => {
    server.answer((_req, res) => { res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav); });
    const ok = await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, file_url: `${server.origin}/a.wav`, mime_type: 'audio/wav' });
    expect(ok.status).toBe(200);
    expect(ok.body.text).toContain('Simulated transcription');
    expectEnvelope(await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, file_url: `${server.origin}/a.wav` }), 400, 'missing_required_parameter', 'mime_type');
    expectEnvelope(await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, file_url: `${server.origin}/a.wav`, mime_type: 'audio/mpeg' }), 400, 'mime_type_mismatch', 'mime_type');
    const inline = await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, audio_data: wav.toString('base64'), mime_type: 'audio/wav' });
    expect(inline.status).toBe(200);
    // An upload typed application/octet-stream (curl's default) is taken for what its bytes are.
    const untyped = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, 'speech', { type: 'application/octet-stream' }) });
    expect(untyped.text).toContain('Simulated transcription');
  });

  it('a file whose name is longer than 255 characters is a 400 naming file (openai client), never sent upstream', async () => {
    const upstream = await stack.simulatorRequestCount();
    const err = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, `${'n'.repeat(252)}.wav`, { type: 'audio/wav' }) })
      .then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'file' });
    expect(await stack.simulatorRequestCount()).toBe(upstream);
  });

  it('file_url to internal addresses, redirects to them and oversize bodies are refused, never fetched past the guard', async () => {
    for (const url of ['https://169.254.169.254/latest/meta-data', 'https://10.0.0.1/a.wav', 'http://example.com/a.wav']) {
      expectEnvelope(await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, file_url: url, mime_type: 'audio/wav' }), 400, undefined, 'file_url');
    }
    server.answer((_req, res) => { res.writeHead(302, { location: 'https://169.254.169.254/a.wav' }).end(); });
    expectEnvelope(await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, file_url: `${server.origin}/redirect`, mime_type: 'audio/wav' }), 400, 'forbidden_address', 'file_url');
    server.answer((_req, res) => { res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.alloc(3 * 1024 * 1024)); });
    expectEnvelope(await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, file_url: `${server.origin}/big.wav`, mime_type: 'audio/wav' }), 413);
  });

  it.each([
    [{ model: E2E_TRANSCRIBE_MODEL }, 400, 'file'],
    [{ model: E2E_TRANSCRIBE_MODEL, file_url: 'https://localhost/a.wav', audio_data: 'AAAA', mime_type: 'audio/wav' }, 400, 'audio_data'],
    [{ model: E2E_TRANSCRIBE_MODEL, audio_data: 'not base64!', mime_type: 'audio/wav' }, 400, 'audio_data'],
    [{ model: E2E_TRANSCRIBE_MODEL, audio_data: 'AAAAAAAAAAAAAAAAAAAA', mime_type: 'audio/wav' }, 400, 'mime_type'],
    [{ model: E2E_TRANSCRIBE_MODEL, audio_data: 'AAAA', mime_type: 'text/plain' }, 400, 'mime_type'],
    [{ model: E2E_IMAGE_MODEL, audio_data: 'AAAA', mime_type: 'audio/wav' }, 400, 'model'],
  ])('%j is refused with %i naming the param', async (body, status, param) => {
    expectEnvelope(await call('POST', '/audio/transcriptions', body), status, undefined, param);
  });

  it.each([
    [{ mime_type: 'constructor' }, 'mime_type'],
    [{ audio_data: 'data:__proto__;base64,AAAA' }, 'audio_data'],
  ])('a type name every object has (%j) is not an audio type', async (over, param) => {
    const res = await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, audio_data: wav.toString('base64'), ...over });
    expectEnvelope(res, 400, 'invalid_value', param);
    expect(res.body.error.message).toMatch(/is not an audio type the gateway takes$/);
  });

  it.each([
    [{ temperature: 3 }, 'temperature'],
    [{ hotwords: 'fox' }, 'hotwords'],
    [{ enable_itn: true }, 'enable_itn'],
    [{ response_format: 'tsv' }, 'response_format'],
    [{ diarize: true }, 'diarize'],
    [{ timestamp_granularities: ['segment', 'zzz'] }, 'timestamp_granularities'],
    [{ prompt: 'x'.repeat(32_001) }, 'prompt'],
  ])('a field the model or its provider cannot take is a 400 naming it: %j', async (extra, param) => {
    const upstream = await stack.simulatorRequestCount();
    expectEnvelope(await call('POST', '/audio/transcriptions', { model: E2E_TRANSCRIBE_MODEL, audio_data: wav.toString('base64'), mime_type: 'audio/wav', ...extra }), 400, undefined, param);
    expect(await stack.simulatorRequestCount()).toBe(upstream);
  });

  it('speech (openai client): audio streamed back, billed per second of audio', async () => {
    const res = await stack.openai.audio.speech.create({ model: E2E_SPEECH_MODEL, input: SENTENCE, voice: 'alloy', response_format: 'wav' }).withResponse();
    const audio = Buffer.from(await res.data.arrayBuffer());
    expect(res.response.headers.get('content-type')).toBe('audio/wav');
    const length = wavDurationSeconds(audio)!;
    expect(length).toBeCloseTo(SENTENCE.length / 15, 1);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, res.response.headers.get('x-request-id')!);
    expect(record).toMatchObject({ api_type: 'speech', streamed: true });
    expect(record.usage.audio_duration_seconds).toBeCloseTo(length, 2);
  });

  it('local espeak-ng speech is real audio, and its transcription round-trips through the gateway', async () => {
    const res = await call('POST', '/audio/speech', { model: E2E_ESPEAK_MODEL, input: SENTENCE, voice: 'en-gb' });
    expect(res.status).toBe(200);
    const spoken = await fetch(`${stack.baseURL}/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: E2E_ESPEAK_MODEL, input: SENTENCE, voice: 'en-us', speed: 1.5 }) });
    const audio = Buffer.from(await spoken.arrayBuffer());
    expect(spoken.headers.get('content-type')).toBe('audio/wav');
    expect(audio.toString('ascii', 0, 4)).toBe('RIFF');
    const record = await waitForBilledRequest(stack.baseURL, stack.key, spoken.headers.get('x-request-id')!);
    expect(record.usage.audio_duration_seconds).toBeGreaterThan(1);
    const back = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(audio, 'espeak.wav', { type: 'audio/wav' }) });
    expect(back.text).toMatch(/^Simulated transcription of \d/);
  });

  it('a real offline recognizer (pocketsphinx) gives words back from gateway-made speech', async () => {
    const spoken = await fetch(`${stack.baseURL}/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: E2E_ESPEAK_MODEL, input: 'one two three four five six seven', voice: 'en-us', speed: 0.65 }) });
    const audio = Buffer.from(await spoken.arrayBuffer());
    const res = await stack.openai.audio.transcriptions.create({ model: E2E_POCKETSPHINX_MODEL, file: await toFile(audio, 'digits.wav', { type: 'audio/wav' }), response_format: 'verbose_json' }).withResponse();
    // Synthetic speech comes back only partly right from a recognizer trained on people; some digits do.
    expect(res.data.text.split(' ').filter((w) => ['one', 'two', 'three', 'four', 'five', 'six', 'seven'].includes(w)).length).toBeGreaterThan(0);
    expect(res.data.segments!.length).toBeGreaterThan(0);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, res.response.headers.get('x-request-id')!);
    expect(record.usage.audio_duration_seconds).toBeCloseTo(res.data.duration!, 2);
  });

  it.each([
    ['no input', { model: E2E_SPEECH_MODEL, voice: 'alloy' }, 'input'],
    ['an input over 4096 characters', { model: E2E_SPEECH_MODEL, input: 'x'.repeat(4097), voice: 'alloy' }, 'input'],
    ['a voice the model does not have', { model: E2E_SPEECH_MODEL, input: 'x', voice: 'robot' }, 'voice'],
    ['speed out of range', { model: E2E_SPEECH_MODEL, input: 'x', voice: 'alloy', speed: 9 }, 'speed'],
    ['a format the model does not offer', { model: E2E_SPEECH_MODEL, input: 'x', voice: 'alloy', response_format: 'ogg' }, 'response_format'],
    ['instructions over 32,000 characters', { model: E2E_SPEECH_MODEL, input: 'x', voice: 'alloy', instructions: 'x'.repeat(32_001) }, 'instructions'],
    ['instructions espeak-ng cannot follow', { model: E2E_ESPEAK_MODEL, input: 'x', voice: 'en-us', instructions: 'whisper' }, 'instructions'],
    ['a transcription model', { model: E2E_TRANSCRIBE_MODEL, input: 'x', voice: 'alloy' }, 'model'],
  ])('speech with %s is refused naming the param', async (_case, body, param) => {
    expectEnvelope(await call('POST', '/audio/speech', body), 400, undefined, param);
  });

  it('native speech body: model rewritten, billed; asset references must be the caller\'s own', async () => {
    const native = await fetch(`${stack.baseURL}/audio/speech`, {
      method: 'POST', headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json', 'svc-native-params': 'true' },
      body: JSON.stringify({ model: E2E_SPEECH_MODEL, input: 'native speech', voice: 'nova', response_format: 'pcm' }),
    });
    expect(native.status).toBe(200);
    const pcm = Buffer.from(await native.arrayBuffer());
    const record = await waitForBilledRequest(stack.baseURL, stack.key, native.headers.get('x-request-id')!);
    expect(record.usage.audio_duration_seconds).toBeCloseTo(pcm.length / 48_000, 2);
    const gen = await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'a voice reference picture' });
    const asset = `asset://${gen.body.data[0].id}`;
    expectEnvelope(await call('POST', '/audio/speech', { model: E2E_SPEECH_MODEL, input: 'x', voice: 'nova', reference_image: asset }, { 'svc-native-params': 'true' }, stack.accountKeys[OTHER]), 400, 'asset_not_found', 'reference_image');
    expectEnvelope(await call('POST', '/audio/speech', { model: E2E_ESPEAK_MODEL, input: 'x' }, { 'svc-native-params': 'true' }), 400, undefined, 'Svc-Native-Params');
  });
});

describe('audio in the single-process stack (embedded engines, filesystem blobs)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-e2e-audio-embedded-'));
  const stack = useStack('embedded');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('espeak-ng speech, then its transcription, each billed per second and found by its ids', async () => {
    const speech = await stack.openai.audio.speech.create({ model: E2E_ESPEAK_MODEL, input: SENTENCE, voice: 'en-us' as never, response_format: 'wav' }).withResponse();
    const audio = Buffer.from(await speech.data.arrayBuffer());
    expect(audio.toString('ascii', 0, 4)).toBe('RIFF');
    const spokenRecord = await waitForBilledRequest(stack.baseURL, stack.key, speech.response.headers.get('x-request-id')!);
    expect(spokenRecord).toMatchObject({ api_type: 'speech', model: E2E_ESPEAK_MODEL });

    const wav = spokenWav(dir, SENTENCE);
    const res = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, 'speech.wav', { type: 'audio/wav' }), response_format: 'verbose_json' }).withResponse();
    expect(res.data.duration).toBeCloseTo(wavDurationSeconds(wav)!, 1);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, res.response.headers.get('x-request-id')!);
    expect((await api(stack.baseURL, 'GET', `/billing/requests/${encodeURIComponent(record.id)}`, { key: stack.key })).body.data.request_id).toBe(record.request_id);
  });
});
