import { z } from 'zod';
import { anthropicErrorSchema } from './anthropic-api';

/**
 * Anthropic message batches wire shapes (`/v1/messages/batches`). Loose objects: the API adds fields we
 * neither need nor want to reject. The processing status is an enum: a state word we do not know is reported
 * as a malformed answer, never guessed at.
 */

export const ANTHROPIC_BATCH_STATUSES = ['in_progress', 'canceling', 'ended'] as const;

export const anthropicMessageBatchSchema = z.looseObject({
  id: z.string(),
  type: z.literal('message_batch').nullish(),
  processing_status: z.enum(ANTHROPIC_BATCH_STATUSES),
  request_counts: z.looseObject({
    processing: z.number(),
    succeeded: z.number(),
    errored: z.number(),
    canceled: z.number(),
    expired: z.number(),
  }),
  cancel_initiated_at: z.string().nullish(),
  ended_at: z.string().nullish(),
  results_url: z.string().nullish(),
});

/** The `error` of an errored line: an error body (`{type: 'error', error: {type, message}}`), or on older answers its inner object. */
const lineErrorSchema = z.union([anthropicErrorSchema, z.looseObject({ type: z.string().nullish(), message: z.string().nullish() })]);

/** One line of the results file. */
export const anthropicBatchResultLineSchema = z.looseObject({
  custom_id: z.string(),
  result: z.discriminatedUnion('type', [
    // Read with the chat adapter's message schema line by line, so one malformed answer fails only its line.
    z.looseObject({ type: z.literal('succeeded'), message: z.unknown() }),
    z.looseObject({ type: z.literal('errored'), error: lineErrorSchema.nullish() }),
    z.looseObject({ type: z.literal('canceled') }),
    z.looseObject({ type: z.literal('expired') }),
  ]),
});

export type AnthropicMessageBatch = z.infer<typeof anthropicMessageBatchSchema>;
export type AnthropicBatchResultLine = z.infer<typeof anthropicBatchResultLineSchema>;
