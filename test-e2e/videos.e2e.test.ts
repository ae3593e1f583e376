import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest, type ApiResponse } from './harness/api';
import { waitFor } from './harness/ports';
import { useCallbackReceiver } from './harness/callback-receiver';
import { useStack } from './harness/stack';
import { E2E_IMAGE_MODEL } from './harness/media-catalog';
import { E2E_SORA_VIDEO_MODEL, E2E_VIDEO_MODEL, E2E_VIDEO_SLASH_MODEL } from './harness/video-catalog';

jest.setTimeout(180_000);

/** E2E_VIDEO_SECOND_PRICE in micros per second (the account's price factor is 1). */
const MICROS_PER_SECOND = 20_000;
const OTHER = 'acct_e2e_video_other';
const CRASH = 'acct_e2e_video_crash';

describe('videos through the edge (processes: Kafka + MongoDB-wire)', () => {
  const callbacks = useCallbackReceiver('videos');
  const stack = useStack('processes', {
    accounts: [{ id: OTHER, credit_usd: '1' }, { id: CRASH, credit_usd: '5' }],
    env: {
      ...callbacks.env, WEBHOOKS_LEASE_MS: '3000', WEBHOOKS_POLL_MS: '200',
      VIDEO_POLL_MIN_MS: '200', VIDEO_POLL_MAX_MS: '500', VIDEO_LEASE_MS: '3000', VIDEO_CLAIM_POLL_MS: '200',
    },
  });

  const call = (method: string, p: string, body?: unknown, key = stack.key, headers: Record<string, string> = {}) => api(stack.baseURL, method, p, { key, body, headers });
  const submit = async (body: object, key = stack.key): Promise<ApiResponse> => {
    const res = await call('POST', '/videos', body, key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: expect.stringMatching(/^video_/), object: 'video', status: 'queued' });
    return res;
  };
  const finished = async (id: string, key = stack.key) => {
    let video: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    await waitFor(`video ${id} to finish`, async () => {
      video = (await call('GET', `/videos/${id}`, undefined, key)).body;
      return video.status === 'completed' || video.status === 'failed';
    }, 60_000);
    return video;
  };
  const deliveriesTo = (p: string) => callbacks.receiver.received.filter((r) => r.path === p);
  const bytes = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

  it('submit → poll → content as redirect, url and binary → exactly one callback; billed per second, found by every id', async () => {
    const made = await submit({
      model: E2E_VIDEO_MODEL, prompt: 'a lighthouse at dusk', duration: 5, resolution: '1080p', aspect_ratio: '16:9', return_last_frame: true,
      generate_audio: true, callback_url: `${callbacks.receiver.origin}/videos/one`, request_id: 'shop-order-17',
    });
    const id = made.body.id;
    const video = await finished(id);
    expect(video).toMatchObject({ status: 'completed', duration: 5, model: E2E_VIDEO_MODEL, usage: { video_duration_seconds: 5 } });
    expect(video.content.last_frame_url).toContain('/v1/media/signed/');
    expect((await fetch(video.content.last_frame_url)).headers.get('content-type')).toBe('image/png');

    const binary = await fetch(`${stack.baseURL}/videos/${id}/content?format=binary`, { headers: { authorization: `Bearer ${stack.key}` } });
    expect(binary.status).toBe(200);
    expect(binary.headers.get('content-type')).toBe('video/mp4');
    expect(binary.headers.get('content-disposition')).toBe(`attachment; filename="${id}.mp4"`);
    const mp4 = Buffer.from(await binary.arrayBuffer());
    expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');

    const asUrl = await call('GET', `/videos/${id}/content?format=url`);
    expect(asUrl.body).toEqual({ url: expect.stringMatching(/\/v1\/media\/signed\//), video_id: id, expires_in: expect.any(Number) });
    expect((await bytes(asUrl.body.url)).equals(mp4)).toBe(true);

    // Byte ranges, as a browser's video element asks to play and seek (Safari plays nothing without them).
    const size = mp4.length;
    const ranged = (url: string, range: string, key = true) => fetch(url, { headers: { range, ...(key ? { authorization: `Bearer ${stack.key}` } : {}) } });
    for (const url of [`${stack.baseURL}/videos/${id}/content?format=binary`, asUrl.body.url as string]) {
      for (const [range, start, end] of [['bytes=0-9', 0, 9], ['bytes=4-', 4, size - 1], ['bytes=-6', size - 6, size - 1], [`bytes=10-${size + 100}`, 10, size - 1]] as const) {
        const part = await ranged(url, range);
        expect(part.status).toBe(206);
        expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${size}`);
        expect(part.headers.get('accept-ranges')).toBe('bytes');
        expect(Buffer.from(await part.arrayBuffer()).equals(mp4.subarray(start, end + 1))).toBe(true);
      }
      const past = await ranged(url, `bytes=${size}-`);
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${size}`);
      expect(await past.json()).toMatchObject({ error: { code: 'range_not_satisfiable', param: 'Range' } });
      // A header it cannot read, or several ranges, get the whole video.
      for (const range of ['bytes=abc', 'bytes=0-1,5-6', 'items=0-1']) {
        const whole = await ranged(url, range);
        expect(whole.status).toBe(200);
        expect(Buffer.from(await whole.arrayBuffer()).equals(mp4)).toBe(true);
      }
    }
    const redirect = await fetch(`${stack.baseURL}/videos/${id}/content`, { headers: { authorization: `Bearer ${stack.key}` }, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    // The signed link is its own credential: fetched without a key, through the edge.
    expect((await bytes(location)).equals(mp4)).toBe(true);
    expect((await bytes(video.url)).equals(mp4)).toBe(true);
    const signedPath = new URL(location).pathname.replace(/^\/v1/, '');
    const tampered = signedPath.slice(0, -1) + (signedPath.endsWith('A') ? 'B' : 'A');
    expectEnvelope(await api(stack.baseURL, 'GET', tampered), 403);

    await waitFor('the callback', async () => deliveriesTo('/videos/one').length > 0, 30_000);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(deliveriesTo('/videos/one')).toHaveLength(1);
    const delivered = deliveriesTo('/videos/one')[0];
    expect(delivered.headers).not.toHaveProperty('authorization');
    expect(delivered.headers).not.toHaveProperty('svc-signature');
    const body = JSON.parse(delivered.body);
    expect(body).toMatchObject({ id, status: 'completed', request_id: 'shop-order-17', payload: { id, object: 'video', status: 'completed', duration: 5 } });
    expect(body).not.toHaveProperty('error');

    const requestId = made.headers.get('x-request-id')!;
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    expect(record).toMatchObject({ request_id: requestId, api_type: 'video', model: E2E_VIDEO_MODEL, usage: { video_duration_seconds: 5 } });
    expect(usdToMicros(record.charged_cost)).toBe(5 * MICROS_PER_SECOND);
    expect((await call('GET', `/billing/requests/${id}`)).body.data.request_id).toBe(requestId);
    expect((await call('GET', `/billing/requests/${record.id}`)).body.data.request_id).toBe(requestId);
  });

  it('a provider task id with slashes is found by the billing lookup', async () => {
    const made = await submit({ model: E2E_VIDEO_SLASH_MODEL, prompt: 'slashes', duration: 3 });
    await finished(made.body.id);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, made.headers.get('x-request-id')!);
    expect(record.id).toMatch(/^tasks\/\d{4}-\d{2}-\d{2}\//);
    const byTask = await call('GET', `/billing/requests/${record.id}`);
    expect(byTask.status).toBe(200);
    expect(byTask.body.data).toMatchObject({ request_id: made.headers.get('x-request-id'), usage: { video_duration_seconds: 3 } });
  });

  it('a receiver failing twice gets the same callback three times, 1 s then 3 s apart, and nothing after its 2xx', async () => {
    let seen = 0;
    callbacks.receiver.answer((req, res) => {
      if (req.path === '/videos/flaky') seen += 1;
      res.writeHead(req.path === '/videos/flaky' && seen <= 2 ? 503 : 200).end();
    });
    const id = (await submit({ model: E2E_SORA_VIDEO_MODEL, prompt: 'sim-fail a forbidden scene', callback_url: `${callbacks.receiver.origin}/videos/flaky` })).body.id;
    const video = await finished(id);
    expect(video).toMatchObject({ status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: expect.any(String) } });
    await waitFor('three attempts', async () => seen >= 3, 30_000);
    await new Promise((r) => setTimeout(r, 5_000));
    const attempts = deliveriesTo('/videos/flaky');
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    expect(attempts[1].atMs - attempts[0].atMs).toBeGreaterThanOrEqual(900);
    expect(attempts[2].atMs - attempts[1].atMs).toBeGreaterThanOrEqual(2_900);
    expect(JSON.parse(attempts[0].body)).toMatchObject({ id, status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected' }, payload: { status: 'failed' } });
    callbacks.receiver.answer((_req, res) => { res.writeHead(200).end(); });
  });

  it('bad input is a 400 naming the param; content before completion is the spec error; another account sees 404', async () => {
    for (const [body, param] of [
      [{ model: E2E_VIDEO_MODEL, prompt: 'x', callback_url: 'https://169.254.169.254/latest' }, 'callback_url'],
      [{ model: E2E_VIDEO_MODEL, prompt: 'x', callback_url: 'https://[::ffff:10.0.0.1]/' }, 'callback_url'],
      [{ model: E2E_VIDEO_MODEL, prompt: 'x', callback_url: 'http://example.com/' }, 'callback_url'],
      [{ model: E2E_VIDEO_MODEL, prompt: 'x', duration: 30 }, 'duration'],
      [{ model: E2E_VIDEO_MODEL, prompt: 'x', aspect_ratio: '5:4' }, 'aspect_ratio'],
      [{ model: E2E_SORA_VIDEO_MODEL, prompt: 'x', seed: 3 }, 'seed'],
      [{ model: E2E_VIDEO_MODEL, prompt: 'x', frames: 24 }, 'frames'],
      [{ model: E2E_VIDEO_MODEL }, 'prompt'],
    ] as const) {
      expectEnvelope(await call('POST', '/videos', body), 400, undefined, param);
    }
    const id = (await submit({ model: E2E_VIDEO_MODEL, prompt: 'sim-slow a long take' })).body.id;
    const early = await call('GET', `/videos/${id}/content?format=url`);
    expect(early.status).toBe(400);
    expect(early.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(/status is (queued|in_progress)/) });
    expectEnvelope(await call('GET', `/videos/${id}`, undefined, stack.accountKeys[OTHER]), 404);
    expectEnvelope(await call('GET', `/videos/${id}/content`, undefined, stack.accountKeys[OTHER]), 404);
    expectEnvelope(await api(stack.baseURL, 'GET', `/videos/${id}`), 401);
  });

  it('native params: a Seedance body under the public model, with an asset:// of the caller\'s own image; refused for another account', async () => {
    const image = await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'first frame' });
    expect(image.status).toBe(200);
    const body = {
      model: E2E_VIDEO_MODEL, ratio: '1:1', duration: 3, camera_fixed: true, callback_url: `${callbacks.receiver.origin}/videos/native`,
      content: [{ type: 'text', text: 'animate the frame' }, { type: 'image_url', image_url: { url: `asset://${image.body.data[0].id}` }, role: 'first_frame' }],
    };
    const native = { 'svc-native-params': 'true' };
    expectEnvelope(await call('POST', '/videos', body, stack.accountKeys[OTHER], native), 400, 'asset_not_found', 'content[1].image_url.url');
    const made = await call('POST', '/videos', body, stack.key, native);
    expect(made.status).toBe(200);
    // The simulated provider refuses image URLs it cannot fetch: completing shows the asset went as a link.
    expect(await finished(made.body.id)).toMatchObject({ status: 'completed', prompt: 'animate the frame', duration: 3, response: { model: 'seedance-1-0-pro-250528', ratio: '1:1' } });
    await waitFor('the native video callback', async () => deliveriesTo('/videos/native').length === 1, 30_000);
    expect(usdToMicros((await waitForBilledRequest(stack.baseURL, stack.key, made.body.id)).charged_cost)).toBe(3 * MICROS_PER_SECOND);
  });

  it('kill -9 of media with videos in flight: after the restart each completes, is billed once and calls back once', async () => {
    const key = stack.accountKeys[CRASH];
    const before = await spendableMicros(stack.baseURL, key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await submit({ model: E2E_VIDEO_MODEL, prompt: `sim-slow take ${i}`, duration: 4, callback_url: `${callbacks.receiver.origin}/videos/crash-${i}` }, key)).body.id);
    }
    await waitFor('all in progress upstream', async () => {
      const videos = await Promise.all(ids.map(async (id) => (await call('GET', `/videos/${id}`, undefined, key)).body));
      return videos.every((v) => v.status === 'in_progress');
    }, 30_000);
    await stack.processes!.kill('media');
    await stack.processes!.start('media');
    for (const id of ids) expect((await finished(id, key)).status).toBe('completed');
    await waitFor('every callback', async () => ids.every((_id, i) => deliveriesTo(`/videos/crash-${i}`).length > 0), 30_000);
    for (const id of ids) await waitForBilledRequest(stack.baseURL, key, id);
    await new Promise((r) => setTimeout(r, 3_000));
    ids.forEach((_id, i) => expect(deliveriesTo(`/videos/crash-${i}`)).toHaveLength(1));
    expect(before - (await spendableMicros(stack.baseURL, key))).toBe(3 * 4 * MICROS_PER_SECOND);
  });
});

describe('videos through the edge (embedded: one process)', () => {
  const stack = useStack('embedded', { env: { VIDEO_POLL_MIN_MS: '100', VIDEO_POLL_MAX_MS: '300', VIDEO_CLAIM_POLL_MS: '100' } });

  it('submit → poll → the stored copy as binary and through its signed link → billed per second', async () => {
    const made = await api(stack.baseURL, 'POST', '/videos', { key: stack.key, body: { model: E2E_SORA_VIDEO_MODEL, prompt: 'rain on a window', duration: 8, aspect_ratio: '9:16' } });
    expect(made.status).toBe(200);
    const id = made.body.id;
    let video: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    await waitFor(`video ${id}`, async () => {
      video = (await api(stack.baseURL, 'GET', `/videos/${id}`, { key: stack.key })).body;
      return video.status === 'completed';
    }, 60_000);
    expect(video).toMatchObject({ duration: 8, parameters: { duration: 8, aspect_ratio: '9:16', size: '720x1280' } });
    const binary = await fetch(`${stack.baseURL}/videos/${id}/content?format=binary`, { headers: { authorization: `Bearer ${stack.key}` } });
    expect(binary.headers.get('content-type')).toBe('video/mp4');
    const mp4 = Buffer.from(await binary.arrayBuffer());
    expect(Buffer.from(await (await fetch(video.url)).arrayBuffer()).equals(mp4)).toBe(true);
    // A byte range of the stored copy (the embedded blob store's files), through both ways of fetching it.
    for (const [url, headers] of [[`${stack.baseURL}/videos/${id}/content?format=binary`, { authorization: `Bearer ${stack.key}` }], [video.url, {}]] as const) {
      const part = await fetch(url, { headers: { ...headers, range: 'bytes=8-15' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 8-15/${mp4.length}`);
      expect(Buffer.from(await part.arrayBuffer()).equals(mp4.subarray(8, 16))).toBe(true);
    }
    const record = await waitForBilledRequest(stack.baseURL, stack.key, id);
    expect(usdToMicros(record.charged_cost)).toBe(8 * MICROS_PER_SECOND);
  });
});
