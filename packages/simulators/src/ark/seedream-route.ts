import type * as http from 'node:http';
import { answerModelKnob, sendJson } from '../http-kit';
import { SIMULATED_FRAME_PNG } from '../video/video-tasks';

/**
 * Seedream image generation (Ark `POST /api/v3/images/generations`), answered in the same request: one image,
 * or with `sequential_image_generation: auto` a group of `sequential_image_generation_options.max_images`
 * (default 4). `response_format` `url` (default; served without a key under `/sim-assets/images/`) or `b64_json`.
 * Knobs: model `sim-error-<status>`; a prompt starting with `sim-fail-second` fails the group's second image.
 */
const SIZE_TIERS: Record<string, string> = { '1K': '1024x1024', '2K': '2048x2048', '4K': '4096x4096' };
const FIELDS = ['model', 'prompt', 'image', 'size', 'seed', 'sequential_image_generation', 'sequential_image_generation_options', 'stream', 'guidance_scale', 'response_format', 'watermark', 'optimize_prompt_options'];
const IMAGES_PATH = '/api/v3/images/generations';
const IMAGE_ASSET = /^\/sim-assets\/images\/([A-Za-z0-9_-]+)\.png$/;

export const isSeedreamPath = (path: string) => path === IMAGES_PATH || IMAGE_ASSET.test(path);

type ErrorBody = (code: string, message: string, param?: string) => unknown;

function sizeOf(size: unknown): string | null {
  if (size === undefined) return '2048x2048';
  if (typeof size !== 'string') return null;
  if (SIZE_TIERS[size]) return SIZE_TIERS[size];
  const m = /^(\d+)x(\d+)$/.exec(size);
  if (!m) return null;
  const pixels = Number(m[1]) * Number(m[2]);
  return pixels >= 1280 * 720 && pixels <= 4096 * 4096 ? size : null;
}

/** The first problem of a body as `[param, message]`, or null. */
function problemOf(body: Record<string, unknown>): [string, string] | null {
  const unknown = Object.keys(body).find((k) => !FIELDS.includes(k));
  if (unknown) return [unknown, `The parameter \`${unknown}\` specified in the request is not valid.`];
  if (typeof body.prompt !== 'string' || body.prompt === '') return ['prompt', 'The request is missing the parameter `prompt`.'];
  if (sizeOf(body.size) === null) return ['size', 'The parameter `size` specified in the request is not valid.'];
  if (body.sequential_image_generation !== undefined && !['auto', 'disabled'].includes(body.sequential_image_generation as string)) return ['sequential_image_generation', 'The parameter `sequential_image_generation` specified in the request is not valid.'];
  const max = (body.sequential_image_generation_options as { max_images?: unknown } | undefined)?.max_images;
  if (max !== undefined && !(Number.isInteger(max) && (max as number) >= 1 && (max as number) <= 15)) return ['sequential_image_generation_options.max_images', 'The parameter `max_images` specified in the request is not valid.'];
  if (body.response_format !== undefined && !['url', 'b64_json'].includes(body.response_format as string)) return ['response_format', 'The parameter `response_format` specified in the request is not valid.'];
  if (body.watermark !== undefined && typeof body.watermark !== 'boolean') return ['watermark', 'The parameter `watermark` specified in the request is not valid.'];
  if (body.seed !== undefined && !(Number.isInteger(body.seed) && (body.seed as number) >= -1 && (body.seed as number) <= 2147483647)) return ['seed', 'The parameter `seed` specified in the request is not valid.'];
  const image = body.image;
  if (image !== undefined && typeof image !== 'string' && !(Array.isArray(image) && image.length <= 10 && image.every((i) => typeof i === 'string'))) return ['image', 'The parameter `image` specified in the request is not valid.'];
  if (body.stream === true) return ['stream', 'Streaming is not simulated.'];
  return null;
}

export function createSeedreamRoutes(latencyMs: (req: http.IncomingMessage) => number, errorBody: ErrorBody, simulatedError: (status: number) => unknown) {
  let counter = 0;

  function generate(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, origin: string): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, errorBody('InvalidParameter', 'The request body is not valid JSON.'));
    }
    if (typeof body?.model !== 'string' || body.model === '') return sendJson(res, 400, errorBody('MissingParameter', 'The request is missing the parameter `model`.', 'model'));
    if (answerModelKnob(res, body.model, latencyMs(req), {}, { errorBody: simulatedError })) return;
    const problem = problemOf(body);
    if (problem) return sendJson(res, 400, errorBody('InvalidParameter', problem[1], problem[0]));
    const group = body.sequential_image_generation === 'auto';
    const count = group ? ((body.sequential_image_generation_options as { max_images?: number } | undefined)?.max_images ?? 4) : 1;
    const failSecond = (body.prompt as string).trim().startsWith('sim-fail-second');
    const size = sizeOf(body.size)!;
    const call = (++counter).toString(36).padStart(8, '0');
    const data = Array.from({ length: count }, (_, i) => {
      if (failSecond && i === 1) return { error: { code: 'OutputImageSensitiveContentDetected', message: 'The generated image may contain sensitive content (simulated failure).' } };
      return body.response_format === 'b64_json'
        ? { b64_json: SIMULATED_FRAME_PNG.toString('base64'), size }
        : { url: `${origin}/sim-assets/images/img-${call}-${i}.png`, size };
    });
    const produced = data.filter((d) => !('error' in d)).length;
    sendJson(res, 200, {
      model: body.model, created: Math.floor(Date.now() / 1000), data,
      usage: { generated_images: produced, output_tokens: produced * 16_384, total_tokens: produced * 16_384 },
    });
  }

  function serveImage(res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': SIMULATED_FRAME_PNG.length });
    res.end(SIMULATED_FRAME_PNG);
  }

  return { generate, serveImage, isAsset: (path: string) => IMAGE_ASSET.test(path) };
}
