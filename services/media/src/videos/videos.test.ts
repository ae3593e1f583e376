import type { RunningService } from '@gw/platform';
import { Readable } from 'node:stream';
import type { ImageRecord } from '../images/image-records';
import { videoBlobKey, type VideoDoc } from './video-records';
import { simulatedMp4 } from '../../../../packages/simulators/src';
import { callMedia, identityOf, openVideoTestBed, SEEDANCE_MODEL, SORA_MODEL, CHAT_MODEL, waitFor, type VideoTestBed } from './video-test-support';

jest.setTimeout(60_000);

const alice = identityOf('acct_alice');
const bob = identityOf('acct_bob');

describe('videos in the media service', () => {
  let bed: VideoTestBed;
  let media: RunningService;
  const call = (method: string, path: string, body?: unknown, who = alice, headers: Record<string, string> = {}) =>
    callMedia(media.httpPort, method, path, who, body, headers);
  const poll = (id: string, status: string[] = ['completed', 'failed']) =>
    waitFor(`video ${id} ${status.join('|')}`, async () => {
      const res = await call('GET', `/v1/videos/${id}`);
      return status.includes(res.body.status) ? res.body : undefined;
    });
  const signedPath = (url: string) => new URL(url).pathname;

  beforeEach(async () => {
    bed = await openVideoTestBed();
    media = await bed.start();
  });
  afterEach(async () => {
    await media?.stop();
    await bed?.close();
  });

  it('submit returns the queued task; it completes with the bytes copied; content in all three formats', async () => {
    const made = await call('POST', '/v1/videos', {
      model: SEEDANCE_MODEL, prompt: 'a red fox in snow', resolution: '1080p', duration: 6, aspect_ratio: '21:9', generate_audio: true,
      return_last_frame: true, seed: 7, watermark: false, request_id: 'order-1',
    });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ id: expect.stringMatching(/^video_/), object: 'video', status: 'queued', model: SEEDANCE_MODEL, prompt: 'a red fox in snow' });
    expect(made.body.parameters).toEqual({ resolution: '1080p', duration: 6, aspect_ratio: '21:9', generate_audio: true, return_last_frame: true, seed: 7, watermark: false });
    expect(made.headers.get('x-request-id')).toMatch(/^br-/);
    const id = made.body.id;

    const done = await poll(id);
    expect(done).toMatchObject({ status: 'completed', progress: 100, duration: 6, fileformat: 'mp4', usage: expect.objectContaining({ video_duration_seconds: 6 }) });
    expect(done.url).toContain('/v1/media/signed/');
    expect(done.video_url).toBe(done.url);
    // The last frame is the gateway's copy too, behind its own signed link.
    expect(done.content.last_frame_url).toContain('/v1/media/signed/');
    const frame = await callMedia(media.httpPort, 'GET', signedPath(done.content.last_frame_url), null);
    expect(frame.headers.get('content-type')).toBe('image/png');
    expect(frame.raw.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(done.response).toMatchObject({ status: 'succeeded', ratio: '21:9', resolution: '1080p' });
    const task = await bed.store.collection<VideoDoc>('videos').findOne({ _id: id });
    const expected = simulatedMp4(task!.provider_task_id!, 6);

    const binary = await call('GET', `/v1/videos/${id}/content?format=binary`);
    expect(binary.status).toBe(200);
    expect(binary.headers.get('content-type')).toBe('video/mp4');
    expect(binary.headers.get('content-disposition')).toBe(`attachment; filename="${id}.mp4"`);
    expect(binary.raw.equals(expected)).toBe(true);

    const asUrl = await call('GET', `/v1/videos/${id}/content?format=url`);
    expect(asUrl.body).toEqual({ url: expect.stringContaining('/v1/media/signed/'), video_id: id, expires_in: bed.config.MEDIA_SIGNED_URL_TTL_S });
    const redirect = await call('GET', `/v1/videos/${id}/content`);
    expect(redirect.status).toBe(302);
    for (const url of [asUrl.body.url, redirect.headers.get('location')!]) {
      const fetched = await callMedia(media.httpPort, 'GET', signedPath(url), null);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toBe('video/mp4');
      expect(fetched.raw.equals(expected)).toBe(true);
    }
    // The provider's copy is not what is served: the gateway's blob is.
    expect((await bed.blobs.stat(task!.blob_key!))?.bytes).toBe(expected.length);

    const tampered = signedPath(asUrl.body.url).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const refused = await callMedia(media.httpPort, 'GET', tampered, null);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ type: expect.any(String), code: 'invalid_signature' });
  });

  it('bills the seconds once, findable by request id, video id and task id; no callback without callback_url', async () => {
    const made = await call('POST', '/v1/videos', { model: SORA_MODEL, prompt: 'waves', duration: 8, aspect_ratio: '9:16' });
    const id = made.body.id;
    await poll(id);
    const event = await waitFor('usage event', () => bed.usage.find((u) => u.media_ids.includes(id)));
    const task = await bed.store.collection<VideoDoc>('videos').findOne({ _id: id });
    expect(event).toMatchObject({
      request_id: made.headers.get('x-request-id'), account_id: 'acct_alice', api_type: 'video', model: SORA_MODEL, status: 'succeeded',
      deployment: `${SORA_MODEL}-dep`, provider_response_id: task!.provider_task_id, usage: expect.objectContaining({ video_duration_seconds: 8 }),
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(bed.usage.filter((u) => u.request_id === event.request_id)).toHaveLength(1);
    expect(bed.callbacks).toHaveLength(0);
    // The billing lookup finds the call by each of its ids, charged 8 s at 0.02 USD a second.
    for (const id of [event.request_id, made.body.id, task!.provider_task_id!]) {
      const found = await waitFor(`billing record by ${id}`, async () => {
        const res = await callMedia(bed.billing.httpPort, 'GET', `/v1/billing/requests/${id}`, alice);
        return res.status === 200 ? res.body.data : undefined;
      });
      expect(found).toMatchObject({ request_id: event.request_id, api_type: 'video', charged_cost: '0.160000', usage: { video_duration_seconds: 8 } });
    }
  });

  it('an account without balance gets a 402 before anything is stored; a failed video gives its hold back', async () => {
    const broke = await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'x' }, identityOf('acct_broke'));
    expect(broke.status).toBe(402);
    expect(await bed.store.collection('videos').find({})).toHaveLength(0);
    const heldMicros = async () => (await bed.store.collection<{ _id: string; held_micros: number }>('accounts').findOne({ _id: 'acct_alice' }))?.held_micros;
    const id = (await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'sim-fail x', duration: 12 })).body.id;
    // 12 s at 0.02 USD a second, held before the answer.
    expect(await heldMicros()).toBe(240_000);
    await poll(id);
    await waitFor('hold released', async () => (await heldMicros()) === 0);
  });

  it('one callback per terminal state, with the spec body and a stable event id', async () => {
    const okMade = await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'ok', callback_url: 'https://127.0.0.1:9/hook', request_id: 'biz-1' });
    const badMade = await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'sim-fail please', callback_url: 'https://127.0.0.1:9/hook' });
    const [ok, bad] = [okMade.body.id, badMade.body.id];
    const failed = await poll(bad);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: expect.any(String) } });
    await poll(ok);
    await waitFor('two callbacks', () => bed.callbacks.length >= 2);
    const okEvent = bed.callbacks.find((c) => c.event_id === `${ok}:completed`)!;
    expect(okEvent).toMatchObject({ kind: 'video', event: 'video.completed', url: 'https://127.0.0.1:9/hook', signed: false, account_id: 'acct_alice' });
    const okBody = JSON.parse(okEvent.body_json);
    expect(okBody).toMatchObject({ id: ok, status: 'completed', request_id: 'biz-1', payload: { id: ok, object: 'video', status: 'completed' } });
    expect(okBody).not.toHaveProperty('error');
    const badBody = JSON.parse(bed.callbacks.find((c) => c.event_id === `${bad}:failed`)!.body_json);
    expect(badBody).toMatchObject({ id: bad, status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected' }, payload: { status: 'failed' } });
    expect(badBody).not.toHaveProperty('request_id');
    expect(bed.usage.filter((u) => u.media_ids.includes(bad))).toHaveLength(0);
    // The statistics count the failed video as the provider's failure, and only it.
    const badRequestId = badMade.headers.get('x-request-id')!;
    await waitFor('the failure reported', () => bed.failures.some((f) => f.request_id === badRequestId));
    expect(bed.failures.filter((f) => f.request_id === badRequestId)).toEqual([expect.objectContaining({
      api_type: 'video', model: SEEDANCE_MODEL, account_id: 'acct_alice', error_kind: 'OutputVideoSensitiveContentDetected', client_error: false, provider: 'ark',
    })]);
    expect(bed.failures.some((f) => f.request_id === okMade.headers.get('x-request-id'))).toBe(false);
  });

  it('content before completion is the spec error naming the status; another account sees 404', async () => {
    const id = (await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'sim-stuck forever' })).body.id;
    await poll(id, ['in_progress']);
    const early = await call('GET', `/v1/videos/${id}/content?format=url`);
    expect(early.status).toBe(400);
    expect(early.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('in_progress') });
    expect((await call('GET', `/v1/videos/${id}`, undefined, bob)).status).toBe(404);
    expect((await call('GET', `/v1/videos/${id}/content`, undefined, bob)).status).toBe(404);
    expect((await call('GET', `/v1/videos/${id}/content?format=zip`)).body.error).toMatchObject({ param: 'format' });
  });

  it.each([
    [{ model: SEEDANCE_MODEL }, 'prompt'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', fps: 30 }, 'fps'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', duration: 20 }, 'duration'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', duration: '5' }, 'duration'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', resolution: '4k' }, 'resolution'],
    [{ model: SORA_MODEL, prompt: 'x', seed: 1 }, 'seed'],
    [{ model: SORA_MODEL, prompt: 'x', return_last_frame: true }, 'return_last_frame'],
    [{ model: SORA_MODEL, prompt: 'x', duration: 5 }, 'duration'],
    [{ model: CHAT_MODEL, prompt: 'x' }, 'model'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', callback_url: 'http://example.com/hook' }, 'callback_url'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', callback_url: 'https://10.0.0.1/hook' }, 'callback_url'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', callback_url: 'https://[::ffff:127.0.0.1]/hook' }, 'callback_url'],
    [{ model: SEEDANCE_MODEL, prompt: 'x', request_id: 5 }, 'request_id'],
  ])('%j is a 400 naming %s, and nothing is stored or sent upstream', async (body, param) => {
    const before = bed.sim.requests;
    const res = await call('POST', '/v1/videos', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param, type: 'invalid_request_error' });
    expect(await bed.store.collection('videos').find({})).toHaveLength(0);
    expect(bed.sim.requests).toBe(before);
  });

  it('an unknown model is a 404', async () => {
    expect((await call('POST', '/v1/videos', { model: 'nope/video', prompt: 'x' })).status).toBe(404);
  });

  it('native params: the supplier body is sent with the provider model; asset:// must be the caller\'s own, sent as a fetchable link', async () => {
    const native = { 'svc-native-params': 'true' };
    const made = await call('POST', '/v1/videos', {
      model: SEEDANCE_MODEL, content: [{ type: 'text', text: 'native fox' }], ratio: '1:1', duration: 3, camera_fixed: true, request_id: 'n-1',
    }, alice, native);
    expect(made.status).toBe(200);
    const done = await poll(made.body.id);
    expect(done).toMatchObject({ status: 'completed', prompt: 'native fox', duration: 3, response: { model: 'seedance-1-0-pro-250528', ratio: '1:1' } });

    // An image alice generated earlier, as the images API stores it.
    await bed.blobs.put('media/images/img_alice1', Readable.from([Buffer.from('png')]));
    await bed.store.collection<ImageRecord>('media_images').insertOne({
      _id: 'img_alice1', account_id: 'acct_alice', request_id: 'br-x', model: 'm', index: 0, prompt: 'p', output_format: 'png', mime_type: 'image/png',
      size: null, bytes: 3, blob_key: 'media/images/img_alice1', metadata: null, created_at_ms: Date.now(),
    });
    const withAsset = (who = alice) => call('POST', '/v1/videos', {
      model: SEEDANCE_MODEL, content: [{ type: 'text', text: 'animate it' }, { type: 'image_url', image_url: { url: 'asset://img_alice1' }, role: 'first_frame' }],
    }, who, native);
    const refused = await withAsset(bob);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: 'content[1].image_url.url', code: 'asset_not_found' });
    // The Ark simulator, like the provider, refuses an image URL it cannot fetch: completing shows the link was sent.
    const own = await withAsset();
    expect(own.status).toBe(200);
    expect(await poll(own.body.id)).toMatchObject({ status: 'completed' });
  });

  it.each([
    ['content[0].text', { content: [{ type: 'text', text: 'x'.repeat(32_001) }] }],
    ['prompt', { prompt: 'x'.repeat(32_001) }],
  ])('native params: a prompt kept on the video task is bounded like a normalized one: over 32,000 characters is a 400 naming %s', async (param, fields) => {
    const before = bed.sim.requests;
    const refused = await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, ...fields }, alice, { 'svc-native-params': 'true' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param });
    expect(bed.sim.requests).toBe(before);
  });

  it('a task the provider never finishes is failed with a clear error once the task timeout passes', async () => {
    await media.stop();
    media = await bed.start({ VIDEO_TASK_TIMEOUT_MS: 600 });
    const id = (await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'sim-stuck', callback_url: 'https://127.0.0.1:9/h' })).body.id;
    const failed = await poll(id);
    expect(failed.error).toEqual({ code: 'video_task_timeout', message: expect.stringContaining('did not finish the video within 1 s (last status: in_progress)') });
    await waitFor('failure callback', () => bed.callbacks.find((c) => c.event_id === `${id}:failed`));
  });

  it('a video URL the provider puts at an internal address on another origin is refused: the video fails, nothing stored or billed', async () => {
    const heldMicros = async () => (await bed.store.collection<{ _id: string; held_micros: number }>('accounts').findOne({ _id: 'acct_alice' }))?.held_micros;
    const id = (await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'sim-internal-video-url please', callback_url: 'https://127.0.0.1:9/h' })).body.id;
    const failed = await poll(id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'video_download_refused', message: expect.stringContaining('private address') } });
    expect(failed.url).toBeUndefined();
    expect(await bed.blobs.stat(videoBlobKey('acct_alice', id))).toBeNull();
    expect((await bed.store.collection<VideoDoc>('videos').findOne({ _id: id }))?.blob_key ?? null).toBeNull();
    await waitFor('failure callback', () => bed.callbacks.find((c) => c.event_id === `${id}:failed`));
    await waitFor('hold released', async () => (await heldMicros()) === 0);
    expect(bed.usage.filter((u) => u.media_ids.includes(id))).toHaveLength(0);
  });

  it('a blob store failure while copying the video is retried, not the end of the video', async () => {
    await media.stop();
    let failures = 0;
    const flaky = Object.create(bed.blobs, {
      put: { value: (...args: Parameters<typeof bed.blobs.put>) => (failures++ === 0 ? Promise.reject(new Error('disk hiccup')) : bed.blobs.put(...args)) },
    });
    media = await bed.start({}, flaky);
    const id = (await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: 'copy me' })).body.id;
    expect(await poll(id)).toMatchObject({ status: 'completed' });
    expect(failures).toBeGreaterThanOrEqual(2);
    expect((await call('GET', `/v1/videos/${id}/content?format=binary`)).status).toBe(200);
  });

  it('two instances on one store share the videos: each is followed by one of them, billed and called back once', async () => {
    const second = await bed.start();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const port = i % 2 === 0 ? media.httpPort : second.httpPort;
        ids.push((await callMedia(port, 'POST', '/v1/videos', alice, { model: SORA_MODEL, prompt: `shared ${i}`, callback_url: 'https://127.0.0.1:9/h' })).body.id);
      }
      for (const id of ids) expect((await callMedia(second.httpPort, 'GET', `/v1/videos/${id}`, alice)).status).toBe(200);
      for (const id of ids) await poll(id);
      await waitFor('usage and callback of each', () => ids.every((id) => bed.usage.some((u) => u.media_ids.includes(id)) && bed.callbacks.some((c) => c.event_id === `${id}:completed`)));
      await new Promise((r) => setTimeout(r, 300));
      for (const id of ids) {
        expect(bed.usage.filter((u) => u.media_ids.includes(id))).toHaveLength(1);
        expect(bed.callbacks.filter((c) => c.event_id.startsWith(id))).toHaveLength(1);
      }
      // Upstream, one task per video: no video was submitted by both instances.
      const upstream = await (await fetch(`${bed.sim.url}/v1/videos`, { headers: { authorization: 'Bearer sk-sim' } })).json() as { data: unknown[] };
      expect(upstream.data).toHaveLength(6);
    } finally {
      await second.stop();
    }
  });

  it('a restart mid-task resumes from the record: the task completes, is billed once and calls back once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await call('POST', '/v1/videos', { model: SEEDANCE_MODEL, prompt: `sim-slow ${i}`, callback_url: 'https://127.0.0.1:9/h' })).body.id);
    }
    await waitFor('all submitted', async () => (await bed.store.collection<VideoDoc>('videos').find({})).every((v) => v.provider_task_id));
    await media.stop();
    const submitted = bed.sim.requests;
    media = await bed.start();
    for (const id of ids) await poll(id);
    await waitFor('usage of each', () => ids.every((id) => bed.usage.some((u) => u.media_ids.includes(id))));
    await waitFor('callback of each', () => ids.every((id) => bed.callbacks.some((c) => c.event_id === `${id}:completed`)));
    await new Promise((r) => setTimeout(r, 300));
    for (const id of ids) {
      expect(bed.usage.filter((u) => u.media_ids.includes(id))).toHaveLength(1);
      expect(bed.callbacks.filter((c) => c.event_id.startsWith(id))).toHaveLength(1);
    }
    // The new instance polled the tasks the old one submitted; it submitted none again.
    const upstream = await (await fetch(`${bed.sim.url}/api/v3/contents/generations/tasks`, { headers: { authorization: 'Bearer sk-sim' } })).json() as { items: unknown[] };
    expect(upstream.items).toHaveLength(3);
    expect(bed.sim.requests).toBeGreaterThan(submitted);
  });
});
