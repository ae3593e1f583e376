import { wavDurationSeconds, wavOf } from '@gw/provider-spec';
import { gptImageGeneration, whisperVerboseTranscription } from '../../../providers/src/openai-media/fixtures/recorded-openai-media-shapes';
import { startSimulators } from '../simulators';
import { PCM_RATE, tonePcm } from './media-samples';

type Sim = Awaited<ReturnType<typeof startSimulators>>;
const KEY = { authorization: 'Bearer sk-test' };
const json = (body: unknown) => ({ method: 'POST', headers: { ...KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) });
/** The keys of an object and of its first array items, recursively: the shape a client reads. */
const shape = (v: unknown): unknown => (Array.isArray(v) ? [shape(v[0])] : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape((v as Record<string, unknown>)[k])])) : typeof v);

describe('simulated OpenAI images and audio', () => {
  let sim: Sim;
  beforeAll(async () => { sim = await startSimulators(); });
  afterAll(() => sim.close());

  it('an image generation has the recorded shape of gpt-image-1', async () => {
    const res = await fetch(`${sim.url}/v1/images/generations`, json({ model: 'gpt-image-1', prompt: 'a cat', response_format: 'b64_json' }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    const { revised_prompt: _revised, ...item } = body.data[0];
    expect(shape({ ...body, data: [item] })).toEqual(shape(gptImageGeneration));
  });

  it('a verbose transcription has the recorded shape of whisper-1 (less the word timestamps not asked for)', async () => {
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('response_format', 'verbose_json');
    form.set('file', new Blob([new Uint8Array(wavOf(tonePcm(2), PCM_RATE))], { type: 'audio/wav' }), 'a.wav');
    const body = (await (await fetch(`${sim.url}/v1/audio/transcriptions`, { method: 'POST', headers: KEY, body: form })).json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    const { words: _words, ...recorded } = whisperVerboseTranscription;
    expect(shape(body)).toEqual(shape(recorded));
    expect(body.duration).toBe(2);
  });

  it.each([
    ['sim-error-400', 400], ['sim-error-429', 429], ['sim-error-500', 500],
  ])('model %s answers HTTP %i in OpenAI\'s error shape', async (model, status) => {
    const res = await fetch(`${sim.url}/v1/images/generations`, json({ model, prompt: 'x' }));
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
    if (status === 429) expect(res.headers.get('retry-after')).toBe('1');
  });

  it('asks for a key, the prompt, and WAV audio', async () => {
    expect((await fetch(`${sim.url}/v1/images/generations`, { method: 'POST', body: '{}' })).status).toBe(401);
    expect(await (await fetch(`${sim.url}/v1/images/generations`, json({ model: 'gpt-image-1' }))).json()).toMatchObject({ error: { param: 'prompt' } });
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([new Uint8Array(Buffer.from('not audio at all'))], { type: 'audio/mpeg' }), 'a.mp3');
    expect((await fetch(`${sim.url}/v1/audio/transcriptions`, { method: 'POST', headers: KEY, body: form })).status).toBe(400);
  });

  it('slows down on request (x-sim-latency-ms)', async () => {
    const started = Date.now();
    await fetch(`${sim.url}/v1/images/generations`, { ...json({ model: 'gpt-image-1', prompt: 'x' }), headers: { ...KEY, 'content-type': 'application/json', 'x-sim-latency-ms': '300' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('speech is a tone as long as the text, in the asked format', async () => {
    const wav = Buffer.from(await (await fetch(`${sim.url}/v1/audio/speech`, json({ model: 'tts', input: 'x'.repeat(45), voice: 'nova', response_format: 'wav' }))).arrayBuffer());
    expect(wavDurationSeconds(wav)).toBeCloseTo(3, 3);
    const pcm = await fetch(`${sim.url}/v1/audio/speech`, json({ model: 'tts', input: 'x'.repeat(45), voice: 'nova', response_format: 'pcm', speed: 1.5 }));
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
    expect((await pcm.arrayBuffer()).byteLength).toBe(2 * 48_000);
  });
});
