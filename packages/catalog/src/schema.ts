import { z } from 'zod';

/**
 * The model catalogue: public models, the ordered deployments that serve them, and each deployment's
 * price. One file is read by inference (routing, the Model objects) and billing (the price book), so a
 * price can never disagree with the route that produced the usage.
 */
const usd = z.string().regex(/^\d+(\.\d{1,6})?$/, 'a USD decimal string with at most 6 decimals');

export const priceSchema = z.object({
  /** USD per million prompt (input) tokens. */
  prompt_per_million: usd,
  /** USD per million completion (output) tokens. */
  completion_per_million: usd,
  /** Flat USD per call, if any. */
  per_request: usd.optional(),
  /** USD per generated image (`generated_images`). */
  per_image: usd.optional(),
  /** USD per second of audio (`audio_duration_seconds`: transcribed or synthesized). */
  per_audio_second: usd.optional(),
  /** USD per second of generated video (`video_duration_seconds`). */
  per_video_second: usd.optional(),
});

export const providerSchema = z.object({
  /** Wire format adapter, e.g. `openai-compatible`. */
  kind: z.string(),
  base_url: z.string().url(),
  /** Environment variable holding the provider credential; never sent by callers. */
  api_key_env: z.string().optional(),
  timeout_ms: z.number().int().positive().default(60_000),
  /** Azure OpenAI style `api-version` query parameter, for providers that version by query. */
  api_version: z.string().optional(),
  /** The provider is offered only when this variable is set (a real provider needs its key). */
  requires_env: z.string().optional(),
});

export const deploymentSchema = z.object({
  id: z.string().min(1),
  provider: z.string(),
  provider_model: z.string(),
  weight: z.number().positive().default(1),
  /** Lower is tried first; deployments sharing a priority split traffic by weight. Default: catalogue order. */
  priority: z.number().int().optional(),
  price: priceSchema,
  /** The provider's own batch API serves this deployment's batches (default false; its wire format must have a batch adapter). */
  native_batch: z.boolean().optional(),
  /** What a line run through the provider's batch API costs (usually half the list price); required with native_batch. */
  batch_price: priceSchema.optional(),
});

/** One request parameter a model takes; for a string, `min` and `max` bound its length in characters. */
const parameterSpec = z.object({
  type: z.string(),
  options: z.array(z.union([z.string(), z.number(), z.boolean()])).nullable().default(null),
  default: z.unknown().default(null),
  min: z.number().nullable().default(null),
  max: z.number().nullable().default(null),
  /** Array parameters (such as `stop`): the model's item limit. */
  max_items: z.number().int().nullable().optional(),
});

export const modelSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  owned_by: z.string(),
  /** ISO date the entry was published or last updated; the Model `created` is derived from it. */
  updated_at: z.string(),
  description: z.string().default(''),
  architecture: z.object({
    input_modalities: z.array(z.string()),
    output_modalities: z.array(z.string()),
    tokenizer: z.string().nullable().default(null),
  }),
  context_length: z.number().int().nullable().default(null),
  default_parameters: z.record(z.string(), z.unknown()).default({}),
  expiration_date: z.string().nullable().default(null),
  model_hub_id: z.string().nullable().default(null),
  knowledge_cutoff: z.string().nullable().default(null),
  per_request_limits: z.object({
    prompt_tokens: z.number().int().nullable().default(null),
    completion_tokens: z.number().int().nullable().default(null),
  }).default({ prompt_tokens: null, completion_tokens: null }),
  parameter_schema: z.record(z.string(), parameterSpec).default({}),
  supported_voices: z.array(z.string()).nullable().default(null),
  /** Whether batches may use this model at all (default true); false also rules out every native batch route. */
  supports_batch: z.boolean().optional(),
  /** The batch model list's `model_type` (default `LLM`). */
  model_type: z.string().optional(),
  /**
   * The media API the model serves (the media service routes it); absent for a chat model. A media model is
   * never routed as chat, and its `parameter_schema` lists every request field it accepts.
   */
  media: z.enum(['image', 'transcription', 'speech', 'video']).optional(),
  deployments: z.array(deploymentSchema).min(1),
});

export const catalogSchema = z.object({
  providers: z.record(z.string(), providerSchema),
  models: z.array(modelSchema),
});

export type Price = z.infer<typeof priceSchema>;
export type ProviderConfig = z.infer<typeof providerSchema>;
export type Deployment = z.infer<typeof deploymentSchema>;
export type CatalogModel = z.infer<typeof modelSchema>;
export type ParameterSpec = z.infer<typeof parameterSpec>;
export type Catalog = z.infer<typeof catalogSchema>;
