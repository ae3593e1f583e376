import { InputError } from '@gw/platform';
import type { GeneratedImage, ImageRequest, ImageResult, ImageUsage, MediaInput } from '@gw/provider-spec';
import type { SeedreamImages } from './seedream-api';

/**
 * The image request fields of the spec Seedream honours, sent under the same names; input images go as
 * `image` (one URL or data URI, or a list of them). `n` has no field here: a group of images is asked for
 * with `sequential_image_generation: auto` (and its `max_images`).
 */
export const SEEDREAM_IMAGE_FIELDS = [
  'size', 'seed', 'watermark', 'response_format', 'sequential_image_generation', 'sequential_image_generation_options', 'optimize_prompt_options', 'images',
] as const;
const SENT = new Set<string>(SEEDREAM_IMAGE_FIELDS.filter((f) => f !== 'images'));

function imageRef(input: MediaInput): string {
  if (input.url) return input.url;
  return `data:${input.mimeType};base64,${input.bytes!.toString('base64')}`;
}

export function toSeedreamBody(req: ImageRequest, providerModel: string): Record<string, unknown> {
  if (req.n !== 1) throw new InputError('n must be 1 for this model; ask for a group with sequential_image_generation: auto', 'n', 'unsupported_value');
  if (req.mask) throw new InputError('mask is not supported by this model\'s provider', 'mask', 'unsupported_parameter');
  const body: Record<string, unknown> = { model: providerModel, prompt: req.prompt };
  for (const [name, value] of Object.entries(req.params)) {
    if (name === 'images' || name === 'n') continue;
    if (!SENT.has(name)) throw new InputError(`${name} is not supported by this model's provider`, name, 'unsupported_parameter');
    body[name] = value;
  }
  if (req.images.length === 1) body.image = imageRef(req.images[0]);
  else if (req.images.length > 1) body.image = req.images.map(imageRef);
  return body;
}

/** The format of base64 image bytes, from their signature; Seedream makes JPEG otherwise. */
function formatOf(b64: string | null | undefined): string {
  return b64?.startsWith('iVBORw0KGgo') ? 'png' : 'jpeg';
}

export function fromSeedreamImages(res: SeedreamImages, providerResponseId: string, providerModel: string): ImageResult {
  const images: GeneratedImage[] = res.data.map((d) => {
    if (d.error) return { outputFormat: formatOf(null), error: { code: d.error.code ?? 'image_failed', message: d.error.message ?? 'The image could not be generated' } };
    if (!d.url && !d.b64_json) return { outputFormat: formatOf(null), error: { code: 'image_missing', message: 'The provider returned no image' } };
    return {
      ...(d.b64_json ? { b64Json: d.b64_json } : {}),
      ...(d.url ? { url: d.url } : {}),
      outputFormat: formatOf(d.b64_json),
      ...(d.size ? { size: d.size } : {}),
      error: null,
    };
  });
  const usage: ImageUsage = { generated_images: res.usage?.generated_images ?? images.filter((i) => i.error === null).length };
  if (typeof res.usage?.output_tokens === 'number') usage.output_tokens = res.usage.output_tokens;
  if (typeof res.usage?.total_tokens === 'number') usage.total_tokens = res.usage.total_tokens;
  return {
    created: res.created, servedModel: res.model ?? providerModel, providerResponseId, images, usage,
    ...(res.error ? { error: { code: res.error.code ?? 'image_failed', message: res.error.message ?? 'The images could not be generated' } } : {}),
  };
}
