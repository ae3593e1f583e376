import { z } from 'zod';

/**
 * Seedance's content generation tasks (BytePlus ModelArk / Volcengine Ark `.../api/v3/contents/generations/tasks`).
 * Submit answers `{id}`; the task answers as below. Loose: the API adds fields we pass on in `response`.
 */
export const SEEDANCE_TASK_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const seedanceCreatedSchema = z.looseObject({ id: z.string() });

export const seedanceTaskSchema = z.looseObject({
  id: z.string(),
  model: z.string().nullish(),
  status: z.enum(SEEDANCE_TASK_STATUSES),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
  content: z.looseObject({ video_url: z.string().nullish(), last_frame_url: z.string().nullish() }).nullish(),
  usage: z.looseObject({ completion_tokens: z.number().nullish(), total_tokens: z.number().nullish() }).nullish(),
  created_at: z.number().nullish(),
  updated_at: z.number().nullish(),
  seed: z.number().nullish(),
  resolution: z.string().nullish(),
  ratio: z.string().nullish(),
  duration: z.number().nullish(),
  framespersecond: z.number().nullish(),
  generate_audio: z.boolean().nullish(),
});

export const seedanceErrorSchema = z.looseObject({
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish(), param: z.string().nullish() }),
});

export type SeedanceTask = z.infer<typeof seedanceTaskSchema>;
