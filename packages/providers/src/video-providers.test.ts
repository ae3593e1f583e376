import { Readable } from 'node:stream';
import { GatewayError, InputError } from '@gw/platform';
import {
  isRetryableUpstreamError, isTerminalVideoStatus, type ChatTarget, type VideoGenerationRequest, type VideoProvider, type VideoTaskHandle, type VideoTaskState,
} from '@gw/provider-spec';
import { simulatedMp4, startSimulators, type RunningSimulator } from '../../simulators/src';
import { createVideoProvider, videoCapabilities } from './create-video-provider';

/** The gateway's opener for URLs off the provider's origin; the simulators only name their own origin, so none is expected. */
const NO_FOREIGN_URLS = { foreignUrls: { open: async (url: string) => { throw new Error(`unexpected foreign URL ${url}`); } } };

/**
 * Every video adapter against the simulator of its wire format: the same tasks, the same expectations. The
 * simulated tasks move one step per poll (see the simulators' video-tasks.ts), so nothing here waits on time.
 */
const FORMATS = [
  { kind: 'openai-compatible', base: '/v1', providerModel: 'sora-2', request: { duration: 8, aspect_ratio: '16:9', resolution: '720p' }, seconds: 8, unsupported: { seed: 1 }, unsupportedParam: 'seed', native: { prompt: 'native body', seconds: '4', size: '1280x720' }, nativeSeconds: 4 },
  { kind: 'ark', base: '/api/v3', providerModel: 'seedance-1-0-pro-250528', request: { duration: 5, aspect_ratio: '21:9', return_last_frame: true, generate_audio: true }, seconds: 5, unsupported: { duration: 20 }, unsupportedParam: 'duration', native: { content: [{ type: 'text', text: 'native body' }], duration: 6, ratio: '1:1' }, nativeSeconds: 6 },
];

async function thrown(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

async function bytesOf(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

describe.each(FORMATS)('video tasks of $kind', (format) => {
  let sim: RunningSimulator;
  let provider: VideoProvider;
  let target: ChatTarget;
  const withModel = (model: string): ChatTarget => ({ ...target, providerModel: model });
  const request = (prompt: string, extra: Partial<VideoGenerationRequest> = {}): VideoGenerationRequest => ({ prompt, ...format.request, ...extra });

  beforeAll(async () => {
    sim = await startSimulators();
    provider = createVideoProvider(format.kind, NO_FOREIGN_URLS);
    target = { baseUrl: `${sim.url}${format.base}`, apiKey: 'sk-sim', providerModel: format.providerModel, timeoutMs: 5_000 };
  });
  afterAll(async () => {
    await provider.close?.();
    await sim.close();
  });

  async function pollToEnd(handle: VideoTaskHandle, maxPolls = 20): Promise<VideoTaskState[]> {
    const states: VideoTaskState[] = [];
    for (let i = 0; i < maxPolls; i++) {
      const state = await provider.poll(handle, target);
      states.push(state);
      if (isTerminalVideoStatus(state.status)) return states;
    }
    return states;
  }

  it('submits, follows the task through its states with progress, and downloads the mp4', async () => {
    const handle = await provider.submit(request('a cat on a skateboard'), target);
    const states = await pollToEnd(handle);
    expect(states.map((s) => s.status)).toEqual(['in_progress', 'in_progress', 'completed']);
    const done = states.at(-1)!;
    expect(done).toMatchObject({ error: null, durationSeconds: format.seconds, usage: expect.objectContaining({ video_duration_seconds: format.seconds }) });
    const content = await provider.download(handle, done, target);
    expect(content.contentType).toBe('video/mp4');
    const bytes = await bytesOf(content.body);
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(bytes.equals(simulatedMp4(handle.id, format.seconds))).toBe(true);
  });

  it('a task that fails upstream is a failed state with its code and message, not a thrown error', async () => {
    const handle = await provider.submit(request('sim-fail a forbidden scene'), target);
    const done = (await pollToEnd(handle)).at(-1)!;
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: 'OutputVideoSensitiveContentDetected', message: expect.stringContaining('sensitive') });
    expect(done.usage).toBeNull();
  });

  it('a slow task runs for more polls; a stuck one never ends', async () => {
    expect((await pollToEnd(await provider.submit(request('sim-slow a long scene'), target))).map((s) => s.status).filter((s) => s === 'in_progress')).toHaveLength(7);
    const stuck = await pollToEnd(await provider.submit(request('sim-stuck forever'), target), 12);
    expect(stuck.every((s) => s.status === 'in_progress')).toBe(true);
  });

  it('a poll answered 503 is a retryable error, and the next poll goes on', async () => {
    const handle = await provider.submit(request('sim-poll-error-503 flaky'), target);
    const err = await thrown(() => provider.poll(handle, target));
    expect(err).toBeInstanceOf(GatewayError);
    expect(isRetryableUpstreamError(err)).toBe(true);
    expect((await provider.poll(handle, target)).status).toBe('in_progress');
  });

  it.each([
    [429, 429, true],
    [500, 502, true],
    [400, 400, false],
  ])('a submit answered %i is a typed %i (retryable: %s)', async (upstream, status, retryable) => {
    const err = await thrown(() => provider.submit(request('x'), withModel(`sim-error-${upstream}`)));
    expect((err as GatewayError).status).toBe(status);
    expect(isRetryableUpstreamError(err)).toBe(retryable);
  });

  it('an unknown task is upstream_task_not_found', async () => {
    const err = await thrown(() => provider.poll({ id: 'no-such-task' }, target));
    expect(err).toMatchObject({ status: 404, code: 'upstream_task_not_found' });
  });

  it('refuses a parameter the format cannot honour before calling anyone', async () => {
    const before = sim.requests;
    const err = await thrown(() => provider.submit(request('x', format.unsupported), target));
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).param).toBe(format.unsupportedParam);
    expect(() => provider.checkRequest(request('x', format.unsupported))).toThrow(InputError);
    expect(sim.requests).toBe(before);
  });

  it('submits a supplier-native body as given, under the provider model', async () => {
    const handle = await provider.submitNative({ ...format.native, model: 'public/name' }, target);
    const done = (await pollToEnd(handle)).at(-1)!;
    expect(done.status).toBe('completed');
    expect(done.durationSeconds).toBe(format.nativeSeconds);
    expect(done.raw.model).toBe(format.providerModel);
  });

  it('task ids with slashes are sent encoded and polled back', async () => {
    const handle = await provider.submit(request('slashed'), withModel('sim-slash-ids'));
    expect(handle.id).toMatch(/^tasks\/\d{4}-\d{2}-\d{2}\//);
    const done = (await pollToEnd(handle)).at(-1)!;
    expect(done.status).toBe('completed');
    expect((await bytesOf((await provider.download(handle, done, target)).body)).equals(simulatedMp4(handle.id, format.seconds))).toBe(true);
  });

  it('declares what it honours', () => {
    expect(videoCapabilities(format.kind)).toBe(provider.capabilities);
  });
});

describe('Seedance last frame', () => {
  it('a task asked for its last frame reports the frame URL', async () => {
    const sim = await startSimulators();
    const provider = createVideoProvider('ark', NO_FOREIGN_URLS);
    try {
      const target = { baseUrl: `${sim.url}/api/v3`, apiKey: 'sk-sim', providerModel: 'seedance-1-0-lite', timeoutMs: 5_000 };
      const handle = await provider.submit({ prompt: 'frame', return_last_frame: true }, target);
      let state = await provider.poll(handle, target);
      while (!isTerminalVideoStatus(state.status)) state = await provider.poll(handle, target);
      expect(state.lastFrameUrl).toBe(`${sim.url}/sim-assets/frames/${handle.id}.png`);
      const frame = await provider.downloadLastFrame!(state, target);
      expect(frame.contentType).toBe('image/png');
      expect((await bytesOf(frame.body)).subarray(1, 4).toString('latin1')).toBe('PNG');
    } finally {
      await provider.close?.();
      await sim.close();
    }
  });
});

describe('Seedance video URLs off the provider origin', () => {
  it('are opened through the gateway\'s opener (its address guard), never the provider\'s pools', async () => {
    const opened: string[] = [];
    const provider = createVideoProvider('ark', {
      foreignUrls: {
        open: async (url) => {
          opened.push(url);
          if (url.includes('internal')) throw new GatewayError('refused', 502, 'upstream_error', 'video_download_refused');
          return { status: 200, contentType: 'video/mp4', body: Readable.from([Buffer.from('mp4 bytes')]) };
        },
      },
    });
    const target = { baseUrl: 'https://ark.example.test/api/v3', apiKey: 'sk', providerModel: 'seedance-1-0-lite', timeoutMs: 5_000 };
    const state = (url: string) => ({ raw: { content: { video_url: url } } }) as unknown as VideoTaskState;
    try {
      const content = await provider.download({ id: 'cgt-1' }, state('https://storage.example.test/v.mp4?sig=1'), target);
      expect((await bytesOf(content.body)).toString()).toBe('mp4 bytes');
      expect(await thrown(() => provider.download({ id: 'cgt-2' }, state('http://internal.example.test/v.mp4'), target))).toMatchObject({ code: 'video_download_refused' });
      expect(opened).toEqual(['https://storage.example.test/v.mp4?sig=1', 'http://internal.example.test/v.mp4']);
    } finally {
      await provider.close?.();
    }
  });
});

describe('Seedance image inputs', () => {
  it('the provider refuses an image URL it cannot fetch (an unresolved asset:// reference), naming content', async () => {
    const sim = await startSimulators();
    const provider = createVideoProvider('ark', NO_FOREIGN_URLS);
    try {
      const target = { baseUrl: `${sim.url}/api/v3`, apiKey: 'sk-sim', providerModel: 'seedance-1-0-lite', timeoutMs: 5_000 };
      const body = (url: string) => ({ content: [{ type: 'text', text: 'animate' }, { type: 'image_url', image_url: { url } }] });
      expect(await thrown(() => provider.submitNative(body('asset://img_1'), target))).toMatchObject({ status: 400, param: 'content' });
      expect((await provider.submitNative(body('https://example.com/first.png'), target)).id).toMatch(/^cgt-sim/);
    } finally {
      await provider.close?.();
      await sim.close();
    }
  });
});

describe('createVideoProvider', () => {
  it('errors on a kind without a video adapter', () => {
    expect(() => createVideoProvider('anthropic', NO_FOREIGN_URLS)).toThrow('no video adapter');
    expect(() => videoCapabilities('nope')).toThrow('no video adapter');
  });
});
