import type { FieldType } from '../validation/request-fields';

/** POST /v1/images/generations: every field of the spec's table, with its type. */
export const IMAGE_FIELDS: Readonly<Record<string, FieldType>> = {
  model: 'string', prompt: 'string', n: 'integer', size: 'string', aspect_ratio: 'string', resolution: 'string', quality: 'string',
  seed: 'integer', prompt_extend: 'boolean', negative_prompt: 'string', watermark: 'boolean', response_format: 'string', images: 'array',
  sequential_image_generation: 'string', sequential_image_generation_options: 'object', optimize_prompt_options: 'object', strength: 'number',
  enable_interleave: 'boolean', enable_web_search: 'boolean', enable_sequential: 'boolean', thinking_mode: 'boolean',
  layer_decomposition: 'boolean', include_thoughts: 'boolean', enable_image_search: 'boolean', output_format: 'string', stream: 'boolean',
  partial_images: 'integer', metadata: 'object', extra_body: 'object', provider_options: 'object', moderation: 'string', mask: 'data',
  bbox_list: 'array', color_palette: 'array', background: 'string', output_compression: 'integer', input_fidelity: 'string', user: 'id',
  thinking_level: 'string', media_resolution: 'string',
};

/** Checked against the table only: every image model takes them. */
export const IMAGE_BASE_FIELDS = ['model', 'prompt'] as const;

/**
 * Fields the gateway itself acts on, never required of a provider: the answer's shape (`response_format`:
 * `url` links to the stored image, `b64_json` inlines it) and `metadata` (kept on the image records).
 * They must still be in the model's parameter schema.
 */
export const GATEWAY_IMAGE_FIELDS = ['response_format', 'metadata'] as const;

/** The most input images an edit takes. */
export const MAX_INPUT_IMAGES = 16;
