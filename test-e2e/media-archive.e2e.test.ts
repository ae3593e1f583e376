import { wavOf } from '@gw/provider-spec';
import { toFile } from 'openai';
import { api, type ApiResponse } from './harness/api';
import { E2E_BATCH_OPENAI_MODEL } from './harness/catalog';
import { E2E_IMAGE_MODEL, E2E_SPEECH_MODEL, E2E_TRANSCRIBE_MODEL } from './harness/media-catalog';
import { waitFor } from './harness/ports';
import { useStack } from './harness/stack';
import { E2E_VIDEO_MODEL } from './harness/video-catalog';

jest.setTimeout(180_000);

const OMITTED = { omitted: expect.stringMatching(/^(base64|binary)$/), bytes: expect.any(Number) };

describe('every media call and provider-batch line is archived, found by its request id (embedded)', () => {
  const stack = useStack('embedded', {
    env: { BATCH_PROVIDER_POLL_MS: '300', BATCH_POLL_MS: '200', VIDEO_POLL_MIN_MS: '200', VIDEO_POLL_MAX_MS: '500', VIDEO_CLAIM_POLL_MS: '200' },
  });

  async function archiveOf(id: string): Promise<ApiResponse> {
    let res!: ApiResponse;
    await waitFor(`archive of ${id}`, async () => {
      res = await api(stack.baseURL, 'GET', `/billing/requests/${encodeURIComponent(id)}/archive`, { key: stack.key });
      return res.status === 200;
    }, 60_000);
    return res;
  }

  /** Media is described, never inlined, and no signed link (a credential while it lives) is kept. */
  function expectNoInlineMedia(archived: ApiResponse, below = 8 * 1024): void {
    const text = JSON.stringify(archived.body.data);
    expect(text.length).toBeLessThan(below);
    expect(text).not.toContain('/v1/media/signed/');
    expect(text).not.toContain(stack.key);
  }

  it('an image generation (b64_json) and a multipart edit: the request, the answer with each image as its record, no base64', async () => {
    const made = await stack.openai.images.generate({ model: E2E_IMAGE_MODEL, prompt: 'a lighthouse, archived', n: 1, response_format: 'b64_json' }).withResponse();
    const item = made.data.data![0] as { id: string; b64_json: string };
    expect(item.b64_json.length).toBeGreaterThan(100);
    const generated = await archiveOf(made.response.headers.get('x-request-id')!);
    expect(generated.body.data).toMatchObject({ api_type: 'image', model: E2E_IMAGE_MODEL, mode: 'full', streamed: false, truncated: false });
    expect(generated.body.data.request).toMatchObject({ prompt: 'a lighthouse, archived', response_format: 'b64_json' });
    expect(generated.body.data.response.data[0]).toMatchObject({ id: item.id, stored: { image_id: item.id, content_type: 'image/png', bytes: expect.any(Number) } });
    expect(generated.body.data.response.data[0].b64_json).toBeUndefined();
    expectNoInlineMedia(generated);

    const png = Buffer.from(item.b64_json, 'base64');
    const edited = await stack.openai.images.edit({ model: E2E_IMAGE_MODEL, prompt: 'the same at night', image: await toFile(png, 'in.png', { type: 'image/png' }) }).withResponse();
    const edit = await archiveOf(edited.response.headers.get('x-request-id')!);
    expect(edit.body.data.request).toMatchObject({ prompt: 'the same at night', image: [{ mimeType: 'image/png', bytes: { ...OMITTED, content_type: 'image/png', bytes: png.length } }] });
    expect(edit.body.data.response.data[0].stored).toMatchObject({ image_id: (edited.data.data![0] as { id: string }).id });
    expectNoInlineMedia(edit);
  });

  it('a transcription (multipart WAV): the fields, the audio described by type and size, and the transcript', async () => {
    // One second of 16 kHz mono 16-bit PCM silence.
    const wav = wavOf(Buffer.alloc(32_000), 16_000);
    const made = await stack.openai.audio.transcriptions.create({ model: E2E_TRANSCRIBE_MODEL, file: await toFile(wav, 'quiet.wav', { type: 'audio/wav' }) }).withResponse();
    const archived = await archiveOf(made.response.headers.get('x-request-id')!);
    expect(archived.body.data).toMatchObject({ api_type: 'transcription', model: E2E_TRANSCRIBE_MODEL, streamed: false });
    expect(archived.body.data.request.file).toEqual({ filename: 'quiet.wav', mime_type: 'audio/wav', bytes: { omitted: 'binary', content_type: 'audio/wav', bytes: wav.length } });
    expect(archived.body.data.response).toMatchObject({ text: made.data.text });
    expectNoInlineMedia(archived);
  });

  it('a speech call: the request, and the audio sent described (type, bytes, seconds), never its bytes', async () => {
    const made = await stack.openai.audio.speech.create({ model: E2E_SPEECH_MODEL, voice: 'alloy', input: 'archive the sound of this' }).withResponse();
    const audio = Buffer.from(await made.data.arrayBuffer());
    expect(audio.length).toBeGreaterThan(0);
    const archived = await archiveOf(made.response.headers.get('x-request-id')!);
    expect(archived.body.data).toMatchObject({ api_type: 'speech', model: E2E_SPEECH_MODEL, streamed: true });
    expect(archived.body.data.request).toMatchObject({ input: 'archive the sound of this', voice: 'alloy' });
    expect(archived.body.data.response).toMatchObject({ content_type: made.response.headers.get('content-type'), bytes: audio.length, audio_duration_seconds: expect.any(Number) });
    expectNoInlineMedia(archived);
  });

  it('a video, once it is terminal: the request and the outcome, its stored copy named by the video id', async () => {
    const made = await api(stack.baseURL, 'POST', '/videos', { key: stack.key, body: { model: E2E_VIDEO_MODEL, prompt: 'a harbour at dawn', duration: 5 } });
    expect(made.status).toBe(200);
    const videoId = made.body.id as string;
    const archived = await archiveOf(made.headers.get('x-request-id')!);
    expect(archived.body.data).toMatchObject({ api_type: 'video', model: E2E_VIDEO_MODEL, streamed: false });
    expect(archived.body.data.request).toMatchObject({ prompt: 'a harbour at dawn', duration: 5 });
    expect(archived.body.data.response).toMatchObject({ id: videoId, status: 'completed', stored: { video_id: videoId, content_type: 'video/mp4', bytes: expect.any(Number) } });
    expectNoInlineMedia(archived);
  });

  it('a failed video, never billed, is found by its provider task id too', async () => {
    const made = await api(stack.baseURL, 'POST', '/videos', { key: stack.key, body: { model: E2E_VIDEO_MODEL, prompt: 'sim-fail a harbour at dusk', duration: 5 } });
    expect(made.status).toBe(200);
    const requestId = made.headers.get('x-request-id')!;
    const archived = await archiveOf(requestId);
    expect(archived.body.data.response).toMatchObject({ id: made.body.id, status: 'failed', stored: null, provider_task_id: expect.any(String) });
    const taskId = archived.body.data.response.provider_task_id as string;
    expect(archived.body.data.id).toBe(taskId);
    const byTask = await archiveOf(taskId);
    expect(byTask.body.data).toMatchObject({ request_id: requestId, api_type: 'video', id: taskId });
    // Never billed: the billing lookup does not know it.
    expect((await api(stack.baseURL, 'GET', `/billing/requests/${encodeURIComponent(requestId)}`, { key: stack.key })).status).toBe(404);
  });

  it("a provider-executed batch: each line under its own request id, with the line's request and its output", async () => {
    const lines = ['first', 'second'].map((word) => JSON.stringify({
      custom_id: `arch-${word}`, method: 'POST', url: '/v1/chat/completions', body: { model: E2E_BATCH_OPENAI_MODEL, messages: [{ role: 'user', content: `the ${word} line` }] },
    }));
    const file = await stack.openai.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'input.jsonl'), purpose: 'batch' });
    const created = await stack.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', execution: 'provider' } as never);
    let batch = created;
    await waitFor(`batch ${created.id} done`, async () => {
      batch = await stack.openai.batches.retrieve(created.id);
      return ['completed', 'failed', 'expired'].includes(batch.status);
    }, 90_000);
    expect(batch.status).toBe('completed');
    const outputs = (await (await stack.openai.files.content(batch.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(outputs).toHaveLength(2);
    for (const out of outputs) {
      const archived = await archiveOf(out.response.request_id);
      expect(archived.body.data).toMatchObject({ request_id: out.response.request_id, api_type: 'batch', model: E2E_BATCH_OPENAI_MODEL, id: out.response.body.id });
      const word = (out.custom_id as string).slice('arch-'.length);
      expect(archived.body.data.request.messages).toEqual([{ role: 'user', content: `the ${word} line` }]);
      expect(archived.body.data.response).toEqual(out);
    }
  });
});
