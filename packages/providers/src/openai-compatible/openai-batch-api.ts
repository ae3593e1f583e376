import { z } from 'zod';

/**
 * OpenAI files and batches wire shapes (`/v1/files`, `/v1/batches`). Loose objects: the API adds fields
 * (model, usage, status_details...) that we neither need nor want to reject. The status is an enum: a state
 * word we do not know is reported as a malformed answer, never guessed at.
 */

export const openAIFileSchema = z.looseObject({
  id: z.string(),
  object: z.literal('file').nullish(),
  bytes: z.number().nullish(),
  purpose: z.string().nullish(),
});

export const OPENAI_BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;

export const openAIBatchSchema = z.looseObject({
  id: z.string(),
  status: z.enum(OPENAI_BATCH_STATUSES),
  output_file_id: z.string().nullish(),
  error_file_id: z.string().nullish(),
  request_counts: z.looseObject({ total: z.number(), completed: z.number(), failed: z.number() }).nullish(),
  errors: z
    .looseObject({
      data: z.array(z.looseObject({ code: z.string().nullish(), message: z.string().nullish(), line: z.number().nullish() })).nullish(),
    })
    .nullish(),
});

/** One line of a batch output or error file. */
export const openAIBatchResultLineSchema = z.looseObject({
  id: z.string().nullish(),
  custom_id: z.string(),
  response: z
    .looseObject({
      status_code: z.number(),
      request_id: z.string().nullish(),
      body: z.unknown(),
    })
    .nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});

export type OpenAIBatch = z.infer<typeof openAIBatchSchema>;
export type OpenAIBatchResultLine = z.infer<typeof openAIBatchResultLineSchema>;
