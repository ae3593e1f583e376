import { z } from 'zod';

/**
 * OpenAI chat completion wire shapes. Loose objects: upstreams add fields (service_tier, obfuscation,
 * annotations, prompt_filter_results...) that we neither need nor want to reject.
 */

export const openAIUsageSchema = z.looseObject({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
});

const openAIToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function').nullish(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/** What a completion and a chunk share; only what each choice carries differs (a message, or a delta). */
function chatEnvelopeSchema<Carried extends z.core.$ZodLooseShape>(carried: Carried) {
  return z.looseObject({
    id: z.string(),
    created: z.number(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number(),
        ...carried,
        logprobs: z.record(z.string(), z.unknown()).nullish(),
        finish_reason: z.string().nullish(),
      }),
    ),
    usage: openAIUsageSchema.nullish(),
  });
}

export const openAIChatResponseSchema = chatEnvelopeSchema({
  message: z.looseObject({
    role: z.string().nullish(),
    content: z.string().nullish(),
    refusal: z.string().nullish(),
    tool_calls: z.array(openAIToolCallSchema).nullish(),
  }),
});

export const openAIChatChunkSchema = chatEnvelopeSchema({
  // Some compatible servers omit the delta on the finish chunk.
  delta: z
    .looseObject({
      role: z.string().nullish(),
      content: z.string().nullish(),
      refusal: z.string().nullish(),
      tool_calls: z
        .array(
          z.looseObject({
            index: z.number(),
            id: z.string().nullish(),
            type: z.literal('function').nullish(),
            function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
          }),
        )
        .nullish(),
    })
    .nullish(),
});

/** An error body, both as an HTTP error answer and as an in-stream `data:` event. */
export const openAIErrorSchema = z.looseObject({
  error: z.looseObject({
    message: z.string().nullish(),
    type: z.string().nullish(),
    param: z.string().nullish(),
    code: z.union([z.string(), z.number()]).nullish(),
  }),
});

export type OpenAIUsage = z.infer<typeof openAIUsageSchema>;
export type OpenAIChatResponse = z.infer<typeof openAIChatResponseSchema>;
export type OpenAIChatChunk = z.infer<typeof openAIChatChunkSchema>;
export type OpenAIError = z.infer<typeof openAIErrorSchema>;
