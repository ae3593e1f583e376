import type { RunningService } from '@gw/platform';
import { callMedia, identityOf, openVideoTestBed, SEEDREAM_MODEL, waitFor, type VideoTestBed } from '../videos/video-test-support';

jest.setTimeout(60_000);

const alice = identityOf('acct_alice');

/** Seedream (the Ark wire format) behind POST /v1/images/generations: its own fields, its per-image failures, billing per image. */
describe('Seedream images through the media service', () => {
  let bed: VideoTestBed;
  let media: RunningService;
  const generate = (body: object) => callMedia(media.httpPort, 'POST', '/v1/images/generations', alice, body);

  beforeEach(async () => {
    bed = await openVideoTestBed();
    media = await bed.start();
  });
  afterEach(async () => {
    await media?.stop();
    await bed?.close();
  });

  it('a sequential group without watermark, one image refused in place, billed per image produced', async () => {
    const res = await generate({
      model: SEEDREAM_MODEL, prompt: 'sim-fail-second a four-panel story', size: '2K', watermark: false,
      sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(3);
    expect(res.body.data.map((d: { error: { code: string } | null }) => d.error?.code ?? 'ok')).toEqual(['ok', 'OutputImageSensitiveContentDetected', 'ok']);
    expect(res.body.data[0]).toMatchObject({ size: '2048x2048', url: expect.any(String) });
    expect(res.body.usage).toMatchObject({ generated_images: 2 });
    const event = await waitFor('usage event', () => bed.usage.find((u) => u.api_type === 'image'));
    expect(event).toMatchObject({ model: SEEDREAM_MODEL, usage: expect.objectContaining({ generated_images: 2 }) });
  });

  it.each([
    [{ quality: 'high' }, 'quality'],
    [{ sequential_image_generation: 'sometimes' }, 'sequential_image_generation'],
    [{ n: 2 }, 'n'],
  ])('%j is a 400 naming %s, never sent upstream', async (extra, param) => {
    const before = bed.sim.requests;
    const res = await generate({ model: SEEDREAM_MODEL, prompt: 'x', ...extra });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param });
    expect(bed.sim.requests).toBe(before);
  });
});
