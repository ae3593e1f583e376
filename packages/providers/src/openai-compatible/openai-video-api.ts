import { z } from 'zod';

/**
 * OpenAI's video object (`POST /v1/videos`, `GET /v1/videos/{id}`). Loose: the API adds fields (quality,
 * remixed_from_video_id, ...) we pass on in `response` without needing them. The status is an enum: a state
 * word we do not know is a malformed answer, never guessed at.
 */
export const OPENAI_VIDEO_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;

export const openAIVideoSchema = z.looseObject({
  id: z.string(),
  object: z.literal('video').nullish(),
  model: z.string().nullish(),
  status: z.enum(OPENAI_VIDEO_STATUSES),
  progress: z.number().nullish(),
  created_at: z.number().nullish(),
  completed_at: z.number().nullish(),
  expires_at: z.number().nullish(),
  size: z.string().nullish(),
  /** Seconds, as a string (`"8"`). */
  seconds: z.union([z.string(), z.number()]).nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});

export type OpenAIVideo = z.infer<typeof openAIVideoSchema>;
