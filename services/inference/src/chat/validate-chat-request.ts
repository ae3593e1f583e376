import { checkBodyDepth, checkFreeForm, InputError, rejectUnknownFields, unknownParameterError } from '@gw/platform';
import { parameterBoundViolation, type CatalogModel } from '@gw/catalog';
import { CHAT_REQUEST_FIELDS, EXTRA_BODY_RESERVED_FIELDS, findUnsupported, type ChatCompletionRequest } from '@gw/provider-spec';
import type { DeploymentRouter, Route } from '../routing/deployment-router';
import { checkChatContentPart } from '../validation/input-parts';
import { checkCallerIdentifier } from '../validation/caller-identifiers';
import { checkFunctionName } from '../validation/function-names';
import { checkPromptFits, estimatePromptTokens } from '../validation/prompt-estimate';

/**
 * Shape checks of the spec's chat body. Every failure is a 400 naming the offending `param` (dotted path
 * with indexes, e.g. `messages[2].role`). A top-level field the request does not have is refused, never
 * ignored: provider fields go in extra_body. Free-form objects are bounded (JSON_BOUNDS), and extra_body may
 * not name a field validated here.
 */
const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'developer']);
const EFFORTS = new Set(['xhigh', 'high', 'medium', 'low', 'minimal', 'none']);
const FORMATS = new Set(['text', 'json_object', 'json_schema']);
const VERBOSITIES = new Set(['low', 'medium', 'high']);
/** OpenAI's largest `n`: a larger one would only be refused upstream, after its reservation. */
const MAX_CHOICES = 128;
/** OpenAI's most functions in one request; a model's `parameter_schema` (`tools.max_items`) may allow fewer. */
const MAX_TOOLS = 128;
/**
 * The chat API's ranges (OpenAI's, which Gemini shares and Anthropic narrows in its converter), held for every
 * model (its `parameter_schema` may narrow them), so a value every provider refuses never costs an upstream call.
 */
const NUMBER_RANGES: Record<string, readonly [number, number]> = {
  temperature: [0, 2], top_p: [0, 1], frequency_penalty: [-2, 2], presence_penalty: [-2, 2], top_logprobs: [0, 20],
};
/** A token id of the model's tokenizer. */
const TOKEN_ID = /^(0|[1-9][0-9]{0,9})$/;

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

function expect(ok: boolean, param: string, message: string): void {
  if (!ok) throw new InputError(message, param);
}

const NUMBER_FIELDS = ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty'];
const INTEGER_FIELDS = ['max_completion_tokens', 'max_tokens', 'top_k', 'context_length', 'top_logprobs', 'seed', 'n'];
const BOOLEAN_FIELDS = ['stream', 'parallel_tool_calls', 'store', 'network_search', 'logprobs'];
const OBJECT_FIELDS = ['metadata', 'extra_body', 'provider_options', 'schema_params', 'conversation', 'logit_bias'];
const STRING_FIELDS = ['model', 'previous_response_id', 'prompt_cache_key', 'safety_identifier', 'truncation', 'verbosity', 'user'];
const KNOWN_FIELDS: ReadonlySet<string> = new Set(CHAT_REQUEST_FIELDS);
/** Fields of OpenAI's chat API (or its Responses API) that this request spells another way. */
const FIELD_HINTS = {
  reasoning_effort: 'set reasoning.effort',
  functions: 'declare them in tools',
  function_call: 'set tool_choice',
  max_output_tokens: 'set max_completion_tokens',
};

/**
 * The fields of the request's own objects (OpenAI's, less what no route honours). Another is refused like an
 * unknown top-level field; the messages alone stay open, so a returned assistant message can be sent back as is.
 */
const STREAM_OPTIONS_FIELDS: ReadonlySet<string> = new Set(['include_usage']);
const REASONING_FIELDS: ReadonlySet<string> = new Set(['enabled', 'effort', 'max_tokens', 'exclude']);
const RESPONSE_FORMAT_FIELDS: ReadonlySet<string> = new Set(['type', 'json_schema']);
const JSON_SCHEMA_FIELDS: ReadonlySet<string> = new Set(['name', 'description', 'schema', 'strict']);
const TOOL_FIELDS: ReadonlySet<string> = new Set(['type', 'function']);
const FUNCTION_FIELDS: ReadonlySet<string> = new Set(['name', 'description', 'parameters', 'strict']);
const TOOL_CHOICE_FIELDS: ReadonlySet<string> = new Set(['type', 'function']);
const TOOL_CHOICE_FUNCTION_FIELDS: ReadonlySet<string> = new Set(['name']);

function onlyFields(obj: Body, path: string, known: ReadonlySet<string>): void {
  for (const name of Object.keys(obj)) if (!known.has(name)) throw unknownParameterError(`${path}.${name}`);
}

export function validateChatBody(body: unknown): ChatCompletionRequest {
  expect(isObject(body), 'body', 'Request body must be a JSON object');
  const b = body as Body;
  rejectUnknownFields(b, KNOWN_FIELDS, FIELD_HINTS);
  expect(typeof b.model === 'string' && b.model.length > 0, 'model', 'model is required and must be a non-empty string');
  for (const f of STRING_FIELDS) if (b[f] !== undefined) expect(typeof b[f] === 'string', f, `${f} must be a string`);
  for (const f of ['prompt_cache_key', 'safety_identifier', 'user'] as const) checkCallerIdentifier(b[f], f);
  for (const f of NUMBER_FIELDS) if (b[f] !== undefined) expect(typeof b[f] === 'number' && Number.isFinite(b[f]), f, `${f} must be a number`);
  // Safe integers only: past 2^53 JSON.parse has already rounded the number, and the provider would get another.
  for (const f of INTEGER_FIELDS) if (b[f] !== undefined) expect(Number.isSafeInteger(b[f]), f, `${f} must be an integer of at most 2^53 - 1 in magnitude`);
  for (const f of BOOLEAN_FIELDS) if (b[f] !== undefined) expect(typeof b[f] === 'boolean', f, `${f} must be a boolean`);
  for (const f of OBJECT_FIELDS) {
    if (b[f] === undefined) continue;
    expect(isObject(b[f]), f, `${f} must be an object`);
    checkFreeForm(b[f], f);
  }
  if (isObject(b.extra_body)) {
    for (const key of Object.keys(b.extra_body)) {
      expect(!EXTRA_BODY_RESERVED_FIELDS.includes(key), `extra_body.${key}`, `extra_body.${key} would replace the validated ${key}: set it as a top-level field`);
    }
  }
  for (const [f, [min, max]] of Object.entries(NUMBER_RANGES)) {
    if (b[f] !== undefined) expect((b[f] as number) >= min && (b[f] as number) <= max, f, `${f} must be from ${min} to ${max}`);
  }
  for (const f of ['max_completion_tokens', 'max_tokens', 'n'] as const) {
    if (b[f] !== undefined) expect((b[f] as number) >= 1, f, `${f} must be at least 1`);
  }
  if (b.n !== undefined) expect((b.n as number) <= MAX_CHOICES, 'n', `n must be at most ${MAX_CHOICES}`);
  if (b.verbosity !== undefined) expect(VERBOSITIES.has(b.verbosity as string), 'verbosity', `verbosity must be one of ${[...VERBOSITIES].join(', ')}`);
  if (isObject(b.logit_bias)) validateLogitBias(b.logit_bias);
  validateMessages(b.messages);
  if (b.stream_options !== undefined) {
    expect(isObject(b.stream_options), 'stream_options', 'stream_options must be an object');
    expect(b.stream === true, 'stream_options', 'stream_options applies to streamed requests only: set stream to true, or leave stream_options out');
    onlyFields(b.stream_options as Body, 'stream_options', STREAM_OPTIONS_FIELDS);
    const inc = (b.stream_options as Body).include_usage;
    expect(inc === undefined || typeof inc === 'boolean', 'stream_options.include_usage', 'include_usage must be a boolean');
  }
  if (b.top_logprobs !== undefined) expect(b.logprobs === true, 'top_logprobs', 'top_logprobs requires logprobs=true');
  if (b.stop !== undefined) {
    const ok = typeof b.stop === 'string' || (Array.isArray(b.stop) && b.stop.every((s) => typeof s === 'string'));
    expect(ok, 'stop', 'stop must be a string or an array of strings');
  }
  const toolNames = b.tools === undefined ? [] : validateTools(b.tools);
  if (b.tool_choice !== undefined) {
    const tc = b.tool_choice;
    const ok = (typeof tc === 'string' && ['none', 'auto', 'required'].includes(tc))
      || (isObject(tc) && typeof tc.type === 'string' && isObject(tc.function) && typeof tc.function.name === 'string');
    expect(ok, 'tool_choice', 'tool_choice must be none, auto, required or {type, function: {name}}');
    if (isObject(tc)) {
      onlyFields(tc, 'tool_choice', TOOL_CHOICE_FIELDS);
      onlyFields(tc.function as Body, 'tool_choice.function', TOOL_CHOICE_FUNCTION_FIELDS);
      const name = (tc.function as Body).name as string;
      expect(toolNames.includes(name), 'tool_choice.function.name', 'tool_choice names a function that tools does not declare');
    }
  }
  if (b.response_format !== undefined) validateResponseFormat(b.response_format);
  if (b.reasoning !== undefined) {
    expect(isObject(b.reasoning), 'reasoning', 'reasoning must be an object');
    const r = b.reasoning as Body;
    onlyFields(r, 'reasoning', REASONING_FIELDS);
    if (r.effort !== undefined) expect(typeof r.effort === 'string' && EFFORTS.has(r.effort), 'reasoning.effort', `reasoning.effort must be one of ${[...EFFORTS].join(', ')}`);
    if (r.max_tokens !== undefined) expect(Number.isSafeInteger(r.max_tokens) && (r.max_tokens as number) >= 1, 'reasoning.max_tokens', 'reasoning.max_tokens must be a positive integer');
    for (const f of ['enabled', 'exclude']) if (r[f] !== undefined) expect(typeof r[f] === 'boolean', `reasoning.${f}`, `reasoning.${f} must be a boolean`);
  }
  if (b.include !== undefined) expect(Array.isArray(b.include) && b.include.every((s) => typeof s === 'string'), 'include', 'include must be an array of strings');
  // Last, so a bound broken inside a free-form object checked above is named by its own param.
  checkBodyDepth(b);
  return b as unknown as ChatCompletionRequest;
}

function validateMessages(messages: unknown): void {
  expect(Array.isArray(messages) && messages.length > 0, 'messages', 'messages must be a non-empty array');
  (messages as unknown[]).forEach((m, i) => {
    const p = `messages[${i}]`;
    expect(isObject(m), p, `${p} must be an object`);
    const msg = m as Body;
    expect(typeof msg.role === 'string' && ROLES.has(msg.role), `${p}.role`, `${p}.role must be one of system, user, assistant, tool`);
    const toolCallTurn = msg.role === 'assistant' && Array.isArray(msg.tool_calls) && msg.tool_calls.length > 0;
    const c = msg.content;
    const contentOk = typeof c === 'string'
      || (Array.isArray(c) && c.every((part) => isObject(part) && typeof part.type === 'string'))
      || (c === null && toolCallTurn) || (c === undefined && toolCallTurn);
    expect(contentOk, `${p}.content`, `${p}.content must be a string or an array of content parts`);
    if (msg.name !== undefined) expect(typeof msg.name === 'string', `${p}.name`, `${p}.name must be a string`);
    if (msg.role === 'tool') expect(typeof msg.tool_call_id === 'string', `${p}.tool_call_id`, `${p}.tool_call_id is required for tool messages`);
  });
}

/** The tools' function names, each checked. */
function validateTools(tools: unknown): string[] {
  expect(Array.isArray(tools), 'tools', 'tools must be an array');
  expect((tools as unknown[]).length <= MAX_TOOLS, 'tools', `tools may declare at most ${MAX_TOOLS} functions`);
  return (tools as unknown[]).map((t, i) => {
    const p = `tools[${i}]`;
    expect(isObject(t) && typeof t.type === 'string', `${p}.type`, `${p}.type is required`);
    onlyFields(t as Body, p, TOOL_FIELDS);
    const fn = (t as Body).function;
    if (isObject(fn)) onlyFields(fn, `${p}.function`, FUNCTION_FIELDS);
    const name = checkFunctionName(isObject(fn) ? fn.name : undefined, `${p}.function.name`);
    const parameters = (fn as Body).parameters;
    if (parameters !== undefined) {
      expect(isObject(parameters), `${p}.function.parameters`, `${p}.function.parameters must be a JSON schema object`);
      checkFreeForm(parameters, `${p}.function.parameters`);
    }
    return name;
  });
}

/** Token ids to biases from -100 to 100 (OpenAI's contract; a provider would refuse anything else). */
function validateLogitBias(bias: Body): void {
  for (const [token, value] of Object.entries(bias)) {
    expect(TOKEN_ID.test(token), 'logit_bias', 'logit_bias keys must be token ids (non-negative integers)');
    const p = `logit_bias.${token}`;
    expect(typeof value === 'number' && value >= -100 && value <= 100, p, `${p} must be a number from -100 to 100`);
  }
}

function validateResponseFormat(rf: unknown): void {
  expect(isObject(rf) && typeof rf.type === 'string' && FORMATS.has(rf.type), 'response_format.type', 'response_format.type must be text, json_object or json_schema');
  const f = rf as Body;
  onlyFields(f, 'response_format', RESPONSE_FORMAT_FIELDS);
  if (f.type === 'json_schema') {
    expect(isObject(f.json_schema), 'response_format.json_schema', 'response_format.json_schema is required for type json_schema');
    const js = f.json_schema as Body;
    onlyFields(js, 'response_format.json_schema', JSON_SCHEMA_FIELDS);
    // The name a provider gives the schema (Anthropic: the forced tool's name), held to OpenAI's rule for both.
    checkFunctionName(js.name, 'response_format.json_schema.name');
    expect(isObject(js.schema), 'response_format.json_schema.schema', 'response_format.json_schema.schema is required and must be a JSON schema object');
    checkFreeForm(js.schema, 'response_format.json_schema.schema');
  }
}

/**
 * Checks against the model's own bounds (`parameter_schema` min/max/options, `per_request_limits`, the
 * stop `max_items`). Out of range is refused, never clamped.
 */
export function validateAgainstModel(req: ChatCompletionRequest, model: CatalogModel): void {
  const body = req as unknown as Body;
  for (const [name, spec] of Object.entries(model.parameter_schema)) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    const violation = parameterBoundViolation(name, value, spec);
    if (violation) throw new InputError(`${violation} for model '${model.id}'`, name);
  }
  const completionLimit = model.per_request_limits.completion_tokens;
  if (completionLimit !== null) {
    for (const f of ['max_completion_tokens', 'max_tokens'] as const) {
      const v = req[f];
      if (v !== undefined) expect(v <= completionLimit, f, `${f} must be at most ${completionLimit} for model '${model.id}'`);
    }
  }
}

/**
 * Everything chat checks against the model: its bounds (validateAgainstModel), the input it can take (content
 * parts by modality, well-formed URLs, no unknown file ids) and its prompt limits (an estimate, see
 * estimatePromptTokens).
 */
export function validateChatForModel(req: ChatCompletionRequest, model: CatalogModel): void {
  validateAgainstModel(req, model);
  req.messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((part, j) => checkChatContentPart(part as Body, model, `messages[${i}].content[${j}]`));
  });
  const capParam = req.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const estimate = estimatePromptTokens([req.messages, req.tools ?? []], req.messages.length);
  checkPromptFits(model, estimate, 'messages', { param: capParam, cap: req.max_completion_tokens ?? req.max_tokens });
}

/**
 * The routes that honour every parameter the request sets (see ChatCapabilities); a 400 naming the first
 * parameter no route of the model honours, before any upstream call.
 */
export function routesHonouring(req: ChatCompletionRequest, model: CatalogModel, router: DeploymentRouter): (route: Route) => boolean {
  const serves = (route: Route) => findUnsupported(route.provider.capabilities, req) === null;
  if (router.candidates(model, serves).length > 0) return serves;
  const [first] = router.candidates(model);
  const found = first ? findUnsupported(first.provider.capabilities, req) : null;
  if (found) throw new InputError(`${found.message} (model ${model.id})`, found.param, found.code);
  return serves;
}
