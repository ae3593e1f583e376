import { InputError } from '@gw/platform';
import type { ChatCapabilities, ChatCompletionRequest, ChatTool, ChatToolChoice, ReasoningOptions } from '@gw/provider-spec';
import { GATEWAY_PARAMETERS, rejectUnsupported, reservedBodyFields } from '../convert/request-field-policy';
import type { GeminiGenerationConfig, GeminiRequest } from './gemini-api';
import { convertJsonSchemaToGeminiSchema, convertToolParameters } from './convert-json-schema-to-gemini-schema';
import { convertToGeminiContents } from './convert-to-gemini-contents';

/**
 * What Gemini honours of a chat request (see ChatCapabilities). Supported fields are rewritten into
 * systemInstruction, contents, tools, toolConfig and generationConfig below.
 */
export const GEMINI_CAPABILITIES: ChatCapabilities = {
  parameters: {
    ...GATEWAY_PARAMETERS,
    temperature: 'supported',
    top_p: 'supported',
    frequency_penalty: 'supported',
    presence_penalty: 'supported',
    max_completion_tokens: 'supported', // maxOutputTokens
    max_tokens: 'supported', // maxOutputTokens when max_completion_tokens is absent
    top_k: 'supported',
    tools: 'supported',
    tool_choice: 'supported',
    parallel_tool_calls: { honouredWhen: (v) => v === true, values: 'true' }, // Gemini may always call in parallel; there is no switch
    prompt_cache_key: 'unsupported', // Gemini caches implicitly; explicit caches are a separate API
    user: 'unsupported', // Gemini's API has no end-user field
    safety_identifier: 'unsupported',
    reasoning: 'supported', // thinkingConfig
    response_format: 'supported', // responseMimeType + responseSchema
    logprobs: 'supported', // responseLogprobs
    top_logprobs: 'supported', // logprobs
    stop: 'supported', // stopSequences
    verbosity: 'unsupported', // no Gemini counterpart
    seed: 'supported',
    n: 'supported', // candidateCount
    logit_bias: 'unsupported', // Gemini has no token biasing
  },
  reservedBodyFields: reservedBodyFields([
    'contents', 'systemInstruction', 'toolConfig',
    ...['maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'candidateCount',
      'stopSequences', 'responseLogprobs', 'logprobs', 'responseMimeType', 'responseSchema', 'thinkingConfig'].map((f) => `generationConfig.${f}`),
  ]),
};

/** Thinking budgets (tokens) per effort; every value is within the range all thinking Gemini models accept. */
const THINKING_BUDGET: Record<string, number> = { none: 0, minimal: 512, low: 2048, medium: 8192, high: 16384, xhigh: 24576 };

export function convertToGeminiRequest(req: ChatCompletionRequest, providerModel: string): GeminiRequest {
  rejectUnsupported(GEMINI_CAPABILITIES, req);
  const prompt = convertToGeminiContents(req.messages, { needsThoughtSignatures: providerModel.startsWith('gemini-3') });
  const body: GeminiRequest = { ...prompt };
  if (req.tools && req.tools.length > 0) body.tools = [{ functionDeclarations: req.tools.map(convertTool) }];
  if (req.tool_choice !== undefined) body.toolConfig = convertToolChoice(req.tool_choice, req.tools ?? []);
  const generationConfig = convertGenerationConfig(req);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return mergeExtraBody(body, req.extra_body);
}

function convertTool(tool: ChatTool, i: number): { name: string; description?: string; parameters?: Record<string, unknown> } {
  if (tool.type !== 'function') throw new InputError(`Tools of type "${tool.type}" are not supported by this provider`, `tools[${i}].type`);
  const fn = tool.function;
  const parameters = convertToolParameters(fn.parameters, `tools[${i}].function.parameters`);
  return { name: fn.name, ...(fn.description !== undefined ? { description: fn.description } : {}), ...(parameters ? { parameters } : {}) };
}

function convertToolChoice(choice: ChatToolChoice, tools: ChatTool[]): NonNullable<GeminiRequest['toolConfig']> {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  const name = choice.function.name;
  if (!tools.some((t) => t.function.name === name)) throw new InputError(`tool_choice names "${name}", which is not among the tools`, 'tool_choice');
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } };
}

function convertGenerationConfig(req: ChatCompletionRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.top_p !== undefined) config.topP = req.top_p;
  if (req.top_k !== undefined) config.topK = req.top_k;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.presence_penalty !== undefined) config.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) config.frequencyPenalty = req.frequency_penalty;
  if (req.n !== undefined) config.candidateCount = req.n;
  if (req.stop !== undefined) config.stopSequences = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (req.logprobs === true) {
    config.responseLogprobs = true;
    if (req.top_logprobs !== undefined) config.logprobs = req.top_logprobs;
  }
  const format = req.response_format;
  if (format?.type === 'json_object' || format?.type === 'json_schema') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema' && format.json_schema.schema !== undefined) {
    config.responseSchema = convertJsonSchemaToGeminiSchema(format.json_schema.schema, 'response_format.json_schema.schema');
  }
  const thinking = req.reasoning ? convertReasoning(req.reasoning) : undefined;
  if (thinking) config.thinkingConfig = thinking;
  return config;
}

/** `max_tokens` wins over `effort` (the spec: it is what runs when both are given). */
function convertReasoning(reasoning: ReasoningOptions): GeminiGenerationConfig['thinkingConfig'] {
  if (reasoning.enabled === false) return { thinkingBudget: 0 };
  const budget = reasoning.max_tokens ?? (reasoning.effort !== undefined ? THINKING_BUDGET[reasoning.effort] : undefined);
  if (budget === 0) return { thinkingBudget: 0 };
  const config: NonNullable<GeminiGenerationConfig['thinkingConfig']> = {};
  if (budget !== undefined) config.thinkingBudget = budget;
  if (reasoning.exclude !== true) config.includeThoughts = true;
  return Object.keys(config).length > 0 ? config : undefined;
}

/** extra_body adds Gemini fields (e.g. safetySettings); its generationConfig is merged into ours. */
function mergeExtraBody(body: GeminiRequest, extra: Record<string, unknown> | undefined): GeminiRequest {
  if (!extra) return body;
  // Reserved fields (the transcript, and generationConfig fields we set) were refused before conversion. Spread,
  // not assignment: a key "__proto__" stays a field instead of becoming the body's prototype.
  const merged: GeminiRequest = { ...body, ...extra };
  const config = extra.generationConfig;
  if (typeof config === 'object' && config !== null) merged.generationConfig = { ...body.generationConfig, ...config };
  return merged;
}
