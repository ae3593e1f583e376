import { InputError } from '@gw/platform';
import type { ChatCapabilities, ChatCompletionRequest, ChatTool, ChatToolChoice, ReasoningEffort, ResponseFormat } from '@gw/provider-spec';
import { GATEWAY_PARAMETERS, rejectUnsupported, reservedBodyFields } from '../convert/request-field-policy';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages';

/** Anthropic requires `max_tokens`; this is the answer room when the caller set no cap. */
export const DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;
const MAX_EFFORT_BUDGET = 32_000;

const onlyZero = { honouredWhen: (v: unknown) => v === 0, values: '0' };

/**
 * What Anthropic's messages API honours of a chat request (see ChatCapabilities). Supported fields are
 * rewritten below (system hoisted, max tokens, stop -> stop_sequences, response_format -> a forced tool,
 * reasoning -> thinking, parallel_tool_calls false -> disable_parallel_tool_use, user or safety_identifier ->
 * metadata.user_id).
 */
export const ANTHROPIC_CAPABILITIES: ChatCapabilities = {
  parameters: {
    ...GATEWAY_PARAMETERS,
    temperature: 'supported',
    top_p: 'supported',
    top_k: 'supported',
    max_completion_tokens: 'supported',
    max_tokens: 'supported',
    frequency_penalty: onlyZero,
    presence_penalty: onlyZero,
    tools: 'supported',
    tool_choice: 'supported',
    parallel_tool_calls: 'supported',
    prompt_cache_key: 'unsupported', // Anthropic caches by cache_control markers, not by key
    user: 'supported', // metadata.user_id
    safety_identifier: 'supported', // metadata.user_id
    reasoning: 'supported',
    response_format: 'supported',
    logprobs: { honouredWhen: (v) => v === false, values: 'false' },
    top_logprobs: onlyZero,
    stop: 'supported',
    verbosity: 'unsupported', // no Anthropic counterpart
    seed: 'unsupported',
    n: { honouredWhen: (v) => v === 1, values: '1' },
    logit_bias: { honouredWhen: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0, values: 'an empty object' },
  },
  reservedBodyFields: reservedBodyFields(['system', 'thinking', 'stop_sequences', 'max_tokens', 'tools', 'tool_choice']),
};

/** The upstream body plus what reading the answer needs to know about how it was asked. */
export interface AnthropicRequest {
  body: Record<string, unknown>;
  /** Set when response_format became a forced tool: that tool's input is the answer's JSON text. */
  jsonToolName?: string;
  /** Whether thinking text goes back to the caller as `reasoning`. */
  includeReasoning: boolean;
}

export function convertToAnthropicRequest(req: ChatCompletionRequest, providerModel: string, stream: boolean): AnthropicRequest {
  rejectUnsupported(ANTHROPIC_CAPABILITIES, req);
  const { system, messages } = convertToAnthropicMessages(req.messages);
  const capField = req.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const cap = req.max_completion_tokens ?? req.max_tokens;
  const body: Record<string, unknown> = { model: providerModel, max_tokens: cap ?? DEFAULT_MAX_TOKENS, messages };
  if (system !== undefined) body.system = system;

  if (req.temperature !== undefined) {
    if (req.temperature < 0 || req.temperature > 1) throw new InputError('temperature must be between 0 and 1 for this model', 'temperature');
    body.temperature = req.temperature;
  }
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined) body.top_k = req.top_k;
  if (req.stop !== undefined) body.stop_sequences = typeof req.stop === 'string' ? [req.stop] : req.stop;

  if (req.tools !== undefined) body.tools = req.tools.map(convertTool);
  const toolChoice = convertToolChoice(req.tool_choice, req.parallel_tool_calls, (req.tools?.length ?? 0) > 0);
  if (toolChoice) body.tool_choice = toolChoice;

  const jsonTool = jsonResponseTool(req.response_format);
  if (jsonTool) {
    if (req.tools?.length || req.tool_choice !== undefined) {
      throw new InputError('A JSON response_format cannot be combined with tools for this model', 'response_format');
    }
    body.tools = [jsonTool];
    body.tool_choice = { type: 'tool', name: jsonTool.name };
  }

  const budget = thinkingBudget(req, cap, capField);
  if (budget !== undefined) {
    const forced = (body.tool_choice as { type?: string } | undefined)?.type;
    if (forced === 'any' || forced === 'tool') {
      throw new InputError('reasoning cannot be combined with a forced tool or a JSON response_format for this model', jsonTool ? 'response_format' : 'tool_choice');
    }
    body.thinking = { type: 'enabled', budget_tokens: budget };
    if (cap === undefined) body.max_tokens = budget + DEFAULT_MAX_TOKENS;
  }

  // Reserved fields were refused above, so extra_body only adds fields. Spread, not assignment: a key
  // "__proto__" stays a field instead of becoming the body's prototype.
  const merged: Record<string, unknown> = { ...body, ...req.extra_body };
  const userId = endUserId(req);
  if (userId !== undefined) merged.metadata = { ...(isObject(req.extra_body?.metadata) ? req.extra_body.metadata : {}), user_id: userId };
  if (stream) merged.stream = true;
  return { body: merged, jsonToolName: jsonTool?.name, includeReasoning: budget !== undefined && req.reasoning?.exclude !== true };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Anthropic keeps one end user (`metadata.user_id`): from `user` or `safety_identifier`, which must then agree. */
function endUserId(req: ChatCompletionRequest): string | undefined {
  const { user, safety_identifier: safetyIdentifier } = req;
  if (user !== undefined && safetyIdentifier !== undefined && user !== safetyIdentifier) {
    throw new InputError('user and safety_identifier name different users; this model\'s provider keeps one (metadata.user_id)', 'safety_identifier');
  }
  const id = safetyIdentifier ?? user;
  const extraMetadata = req.extra_body?.metadata;
  if (id !== undefined && isObject(extraMetadata) && extraMetadata.user_id !== undefined) {
    throw new InputError(`extra_body.metadata.user_id and ${user !== undefined ? 'user' : 'safety_identifier'} both name the end user; set one`, 'extra_body.metadata.user_id');
  }
  return id;
}

function convertTool(tool: ChatTool, i: number): Record<string, unknown> {
  if (tool.type !== 'function') throw new InputError(`Tools of type "${tool.type}" are not supported by this model`, `tools[${i}].type`);
  const { name, description, parameters } = tool.function;
  const out: Record<string, unknown> = { name, input_schema: parameters ?? { type: 'object', properties: {} } };
  if (description !== undefined) out.description = description;
  return out;
}

function convertToolChoice(choice: ChatToolChoice | undefined, parallel: boolean | undefined, hasTools: boolean): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice === 'none') out = { type: 'none' };
  else if (choice !== undefined) {
    if (choice.type !== 'function') throw new InputError(`tool_choice of type "${choice.type}" is not supported by this model`, 'tool_choice.type');
    out = { type: 'tool', name: choice.function.name };
  }
  // Anthropic puts the parallel switch on tool_choice, and `none` has no calls to parallelize.
  if (parallel === false && hasTools && out?.type !== 'none') out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/** The tool a JSON response_format is forced through; Anthropic has no JSON mode of its own in this API version. */
function jsonResponseTool(format: ResponseFormat | undefined): { name: string; description: string; input_schema: Record<string, unknown> } | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') {
    return { name: 'json_response', description: 'Respond with a JSON object.', input_schema: { type: 'object', additionalProperties: true } };
  }
  if (format.type === 'json_schema') {
    const { name, description, schema } = format.json_schema ?? {};
    if (typeof name !== 'string' || name === '') throw new InputError('response_format.json_schema needs a name', 'response_format.json_schema.name');
    return { name, description: description ?? 'Respond with the answer as this JSON object.', input_schema: schema ?? { type: 'object' } };
  }
  throw new InputError(`response_format of type "${(format as { type: string }).type}" is not supported`, 'response_format.type');
}

/** Share of the answer cap given to thinking per effort, when the caller set a cap. */
const EFFORT_SHARE: Record<Exclude<ReasoningEffort, 'none'>, number> = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8, xhigh: 0.95 };
/** Budget per effort without a cap; the answer then gets DEFAULT_MAX_TOKENS on top. */
const EFFORT_BUDGET: Record<Exclude<ReasoningEffort, 'none'>, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16_384, xhigh: 32_000 };

/** The thinking budget, or undefined when the caller did not ask for reasoning. */
function thinkingBudget(req: ChatCompletionRequest, cap: number | undefined, capField: string): number | undefined {
  const r = req.reasoning;
  if (!r || r.enabled === false || r.effort === 'none') return undefined;
  if (r.max_tokens === undefined && r.effort === undefined && r.enabled !== true) return undefined;
  let budget: number;
  if (r.max_tokens !== undefined) {
    if (!Number.isInteger(r.max_tokens) || r.max_tokens < MIN_THINKING_BUDGET) {
      throw new InputError(`reasoning.max_tokens must be an integer of at least ${MIN_THINKING_BUDGET} for this model`, 'reasoning.max_tokens');
    }
    budget = r.max_tokens;
  } else {
    const effort = r.effort ?? 'medium';
    budget = cap === undefined ? EFFORT_BUDGET[effort] : Math.min(MAX_EFFORT_BUDGET, Math.max(MIN_THINKING_BUDGET, Math.floor(cap * EFFORT_SHARE[effort])));
  }
  // max_tokens counts thinking too; a budget that fills it leaves no room for the answer.
  if (cap !== undefined && budget >= cap) throw new InputError(`${capField} must be larger than the reasoning budget (${budget} tokens)`, capField);
  return budget;
}
