import { z } from 'zod';

/**
 * The OpenAI images and audio wire shapes the gateway reads (as recorded in fixtures/recorded-openai-media-shapes.ts).
 * Loose objects: fields added upstream later pass through unread.
 */

const count = z.number().int().min(0);

export const openAIImageUsageSchema = z.looseObject({
  input_tokens: count.optional(),
  output_tokens: count.optional(),
  total_tokens: count.optional(),
  input_tokens_details: z.record(z.string(), z.number()).optional(),
  output_tokens_details: z.record(z.string(), z.number()).optional(),
});

/** One item of `data[]`; compatible servers of other vendors also report a failed image in place as `error`. */
const imageItemSchema = z.looseObject({
  b64_json: z.string().nullish(),
  url: z.string().nullish(),
  revised_prompt: z.string().nullish(),
  size: z.string().nullish(),
  error: z.looseObject({ code: z.union([z.string(), z.number()]).nullish(), message: z.string().nullish() }).nullish(),
});

export const openAIImagesResponseSchema = z.looseObject({
  created: z.number().int(),
  data: z.array(imageItemSchema).default([]),
  background: z.string().nullish(),
  output_format: z.string().nullish(),
  quality: z.string().nullish(),
  size: z.string().nullish(),
  usage: openAIImageUsageSchema.nullish(),
  /** A request-level error payload some compatible servers return with a 200. */
  error: z.looseObject({ code: z.union([z.string(), z.number()]).nullish(), message: z.string().nullish() }).nullish(),
});

/** `image_generation.*` / `image_edit.*` stream events (`partial_image`, `completed`). */
export const openAIImageStreamEventSchema = z.looseObject({
  type: z.string(),
  b64_json: z.string().optional(),
  created_at: z.number().optional(),
  size: z.string().optional(),
  output_format: z.string().optional(),
  partial_image_index: z.number().int().optional(),
  usage: openAIImageUsageSchema.optional(),
});

/** `usage` of a transcription: token-billed models report tokens, duration-billed ones (whisper) seconds. */
export const openAITranscriptionUsageSchema = z.union([
  z.looseObject({ type: z.literal('tokens'), input_tokens: count, output_tokens: count, total_tokens: count.optional() }),
  z.looseObject({ type: z.literal('duration'), seconds: z.number().min(0) }),
]);

export const openAITranscriptionSchema = z.looseObject({
  text: z.string(),
  task: z.string().optional(),
  language: z.string().optional(),
  duration: z.number().optional(),
  segments: z.array(z.looseObject({ id: z.number().int(), start: z.number(), end: z.number(), text: z.string() })).optional(),
  words: z.array(z.looseObject({ word: z.string(), start: z.number(), end: z.number() })).optional(),
  usage: openAITranscriptionUsageSchema.optional(),
});

/** `transcript.text.delta` / `transcript.text.done` stream events. */
export const openAITranscriptStreamEventSchema = z.looseObject({
  type: z.string(),
  delta: z.string().optional(),
  text: z.string().optional(),
  usage: openAITranscriptionUsageSchema.optional(),
});

export type OpenAIImagesResponse = z.infer<typeof openAIImagesResponseSchema>;
export type OpenAIImageStreamEvent = z.infer<typeof openAIImageStreamEventSchema>;
export type OpenAITranscription = z.infer<typeof openAITranscriptionSchema>;
