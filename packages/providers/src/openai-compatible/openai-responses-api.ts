import { z } from 'zod';
import type { Usage } from '@gw/provider-spec';

/**
 * The few OpenAI Responses API fields the gateway reads (id, model, usage); everything else passes through
 * untouched, so the schemas are loose.
 */

export const responsesUsageSchema = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
});

export const responseObjectSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  usage: responsesUsageSchema.nullish(),
});

/** `response.created`, `response.in_progress`, `response.completed`, `response.incomplete`, `response.failed`. */
export const responseLifecycleEventSchema = z.looseObject({
  type: z.string(),
  response: responseObjectSchema,
});

export type ResponsesUsage = z.infer<typeof responsesUsageSchema>;

/** Input/output counts as reported, mirrored into prompt/completion so billing prices them like chat. */
export function convertResponsesUsage(usage: ResponsesUsage | null | undefined, providerRequestId: string | undefined): Usage {
  const out: Usage = {};
  if (typeof usage?.input_tokens === 'number') {
    out.input_tokens = usage.input_tokens;
    out.prompt_tokens = usage.input_tokens;
  }
  if (typeof usage?.output_tokens === 'number') {
    out.output_tokens = usage.output_tokens;
    out.completion_tokens = usage.output_tokens;
  }
  if (typeof usage?.total_tokens === 'number') out.total_tokens = usage.total_tokens;
  if (providerRequestId) out.provider_request_id = providerRequestId;
  return out;
}
