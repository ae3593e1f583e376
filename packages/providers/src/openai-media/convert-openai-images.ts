import type { GeneratedImage, ImageRequest, ImageResult, ImageStreamEvent, ImageUsage } from '@gw/provider-spec';
import { FormData } from 'undici';
import type { OpenAIImagesResponse, OpenAIImageStreamEvent } from './openai-media-api';

/** The image request fields of the spec this wire format honours, sent under the same names. */
export const OPENAI_IMAGE_GENERATION_FIELDS = [
  'n', 'size', 'quality', 'background', 'output_format', 'output_compression', 'moderation', 'response_format', 'user', 'stream', 'partial_images',
] as const;
/** Edits (input images) add the mask and how faithfully the input is kept; moderation is a generation field only. */
export const OPENAI_IMAGE_EDIT_FIELDS = [
  'n', 'size', 'quality', 'background', 'output_format', 'output_compression', 'response_format', 'user', 'stream', 'partial_images', 'input_fidelity', 'mask', 'images',
] as const;

/** The JSON body of `POST /images/generations`. */
export function toOpenAIGenerationBody(req: ImageRequest, providerModel: string, stream: boolean): Record<string, unknown> {
  return { ...sentParams(req), model: providerModel, prompt: req.prompt, n: req.n, ...(stream ? { stream: true } : {}) };
}

/** The multipart form of `POST /images/edits`: `image[]` for each input image, `mask` when given. */
export function toOpenAIEditForm(req: ImageRequest, providerModel: string, stream: boolean): FormData {
  const form = new FormData();
  form.set('model', providerModel);
  form.set('prompt', req.prompt);
  form.set('n', String(req.n));
  for (const [name, value] of Object.entries(sentParams(req))) form.set(name, String(value));
  if (stream) form.set('stream', 'true');
  for (const image of req.images) form.append('image[]', new Blob([new Uint8Array(image.bytes!)], { type: image.mimeType }), image.filename);
  if (req.mask) form.set('mask', new Blob([new Uint8Array(req.mask.bytes!)], { type: req.mask.mimeType }), req.mask.filename);
  return form;
}

function sentParams(req: ImageRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(req.params)) {
    if (name === 'stream' || name === 'images' || name === 'mask') continue;
    out[name] = value;
  }
  return out;
}

function errorOf(e: { code?: string | number | null; message?: string | null } | null | undefined) {
  return e ? { code: String(e.code ?? 'image_failed'), message: e.message ?? 'The image could not be generated' } : null;
}

export function imageUsageOf(usage: OpenAIImagesResponse['usage'], images: number): ImageUsage {
  const out: ImageUsage = { generated_images: images };
  if (!usage) return out;
  for (const k of ['input_tokens', 'output_tokens', 'total_tokens'] as const) if (usage[k] !== undefined) out[k] = usage[k];
  if (usage.input_tokens_details) out.input_tokens_details = usage.input_tokens_details;
  if (usage.output_tokens_details) out.output_tokens_details = usage.output_tokens_details;
  return out;
}

export function fromOpenAIImages(res: OpenAIImagesResponse, requestedFormat: string, providerResponseId: string, servedModel: string): ImageResult {
  const outputFormat = res.output_format ?? requestedFormat;
  const images: GeneratedImage[] = res.data.map((d) => ({
    ...(d.b64_json ? { b64Json: d.b64_json } : {}),
    ...(d.url ? { url: d.url } : {}),
    ...(d.revised_prompt ? { revisedPrompt: d.revised_prompt } : {}),
    outputFormat,
    ...(d.size ?? res.size ? { size: (d.size ?? res.size)! } : {}),
    error: d.error ? errorOf(d.error) : (!d.b64_json && !d.url ? { code: 'image_missing', message: 'The provider returned no image' } : null),
  }));
  const produced = images.filter((i) => i.error === null).length;
  return {
    created: res.created, servedModel, providerResponseId, images,
    usage: imageUsageOf(res.usage, produced),
    ...(res.error ? { error: errorOf(res.error)! } : {}),
  };
}

/** One stream event of either operation; events of other types are not part of the image and are skipped. */
export function fromOpenAIImageStreamEvent(e: OpenAIImageStreamEvent, state: { index: number; outputFormat: string }): ImageStreamEvent | null {
  const kind = e.type.replace(/^image_(generation|edit)\./, '');
  const outputFormat = e.output_format ?? state.outputFormat;
  if (kind === 'partial_image' && e.b64_json !== undefined) {
    return { type: 'partial', index: state.index, partialIndex: e.partial_image_index ?? 0, b64Json: e.b64_json, outputFormat, ...(e.size ? { size: e.size } : {}) };
  }
  if (kind === 'completed' && e.b64_json !== undefined) {
    return { type: 'completed', index: state.index++, image: { b64Json: e.b64_json, outputFormat, ...(e.size ? { size: e.size } : {}), error: null } };
  }
  return null;
}
