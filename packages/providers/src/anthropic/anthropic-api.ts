import { z } from 'zod';

/**
 * Anthropic Messages wire shapes. Loose objects: the API adds fields (service_tier, cache_creation,
 * citations, container...) and new block and event types that we neither need nor want to reject.
 */

export const anthropicUsageSchema = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});

const textBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
const toolUseBlockSchema = z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });
const thinkingBlockSchema = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });

const KNOWN_BLOCK_TYPES = new Set(['text', 'tool_use', 'thinking']);
/** Blocks we pass over (redacted_thinking, server_tool_use, web_search_tool_result...); known types must match their schema. */
const otherBlockSchema = z.looseObject({ type: z.string().refine((type) => !KNOWN_BLOCK_TYPES.has(type)) });

export const anthropicContentBlockSchema = z.union([textBlockSchema, toolUseBlockSchema, thinkingBlockSchema, otherBlockSchema]);

export const anthropicMessageSchema = z.looseObject({
  id: z.string(),
  type: z.string().nullish(),
  role: z.string().nullish(),
  model: z.string(),
  content: z.array(anthropicContentBlockSchema),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});

/** The id, model and usage of a message; all the native passthrough needs to read of an answer. */
export const anthropicMessageEnvelopeSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  usage: anthropicUsageSchema.nullish(),
});

/** `POST /v1/messages/count_tokens` answer. */
export const anthropicTokenCountSchema = z.looseObject({ input_tokens: z.number().int().nonnegative() });

export const anthropicErrorSchema = z.looseObject({
  type: z.literal('error').nullish(),
  error: z.looseObject({ type: z.string().nullish(), message: z.string().nullish() }),
});

const messageStartEventSchema = z.looseObject({ type: z.literal('message_start'), message: anthropicMessageEnvelopeSchema });
const contentBlockStartEventSchema = z.looseObject({
  type: z.literal('content_block_start'),
  index: z.number(),
  content_block: anthropicContentBlockSchema,
});
const contentBlockDeltaEventSchema = z.looseObject({
  type: z.literal('content_block_delta'),
  index: z.number(),
  delta: z.union([
    z.looseObject({ type: z.literal('text_delta'), text: z.string() }),
    z.looseObject({ type: z.literal('input_json_delta'), partial_json: z.string() }),
    z.looseObject({ type: z.literal('thinking_delta'), thinking: z.string() }),
    // signature_delta, citations_delta and later delta types carry nothing for a chat completion.
    z.looseObject({ type: z.string().refine((type) => !['text_delta', 'input_json_delta', 'thinking_delta'].includes(type)) }),
  ]),
});
const contentBlockStopEventSchema = z.looseObject({ type: z.literal('content_block_stop'), index: z.number() });
const messageDeltaEventSchema = z.looseObject({
  type: z.literal('message_delta'),
  delta: z.looseObject({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }),
  usage: anthropicUsageSchema.nullish(),
});
const messageStopEventSchema = z.looseObject({ type: z.literal('message_stop') });
const pingEventSchema = z.looseObject({ type: z.literal('ping') });
const errorEventSchema = anthropicErrorSchema.extend({ type: z.literal('error') });

export const anthropicStreamEventSchema = z.discriminatedUnion('type', [
  messageStartEventSchema,
  contentBlockStartEventSchema,
  contentBlockDeltaEventSchema,
  contentBlockStopEventSchema,
  messageDeltaEventSchema,
  messageStopEventSchema,
  pingEventSchema,
  errorEventSchema,
]);

/** Event types this schema knows; others are skipped, as Anthropic's versioning policy asks of clients. */
export const KNOWN_STREAM_EVENT_TYPES: ReadonlySet<string> = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
]);

export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;
export type AnthropicTextBlock = z.infer<typeof textBlockSchema>;
export type AnthropicToolUseBlock = z.infer<typeof toolUseBlockSchema>;
export type AnthropicThinkingBlock = z.infer<typeof thinkingBlockSchema>;
export type AnthropicContentBlock = z.infer<typeof anthropicContentBlockSchema>;
export type AnthropicMessage = z.infer<typeof anthropicMessageSchema>;
export type AnthropicStreamEvent = z.infer<typeof anthropicStreamEventSchema>;
export type AnthropicError = z.infer<typeof anthropicErrorSchema>;

/*
 * Narrowing by `type` alone does not work on these unions (the catch-all members have `type: string`), but
 * the schemas above refuse a known type without its fields, so after parsing the type decides.
 */
export const isTextBlock = (block: AnthropicContentBlock): block is AnthropicTextBlock => block.type === 'text';
export const isToolUseBlock = (block: AnthropicContentBlock): block is AnthropicToolUseBlock => block.type === 'tool_use';
export const isThinkingBlock = (block: AnthropicContentBlock): block is AnthropicThinkingBlock => block.type === 'thinking';

type BlockDelta = Extract<AnthropicStreamEvent, { type: 'content_block_delta' }>['delta'];
export const isTextDelta = (d: BlockDelta): d is Extract<BlockDelta, { type: 'text_delta' }> => d.type === 'text_delta';
export const isInputJsonDelta = (d: BlockDelta): d is Extract<BlockDelta, { type: 'input_json_delta' }> => d.type === 'input_json_delta';
export const isThinkingDelta = (d: BlockDelta): d is Extract<BlockDelta, { type: 'thinking_delta' }> => d.type === 'thinking_delta';
