import { checkBodyDepth, checkFreeForm, NotImplementedError, parseKeyValueMetadata } from '@gw/platform';
import { checkCallerIdentifier } from '../validation/caller-identifiers';
import { checkFunctionName } from '../validation/function-names';
import {
  check, checkEnum, checkModel, checkNumber, checkRequestBody, checkType, checkTypedParts, isAbsent, isObject, type Body,
} from './body-checks';

/**
 * The spec's rules for `POST /v1/responses` (field table, Rules, Limits). The gateway is stateless, so
 * anything that needs a stored response or conversation is a 501; a malformed field is a 400 naming it.
 * Fields not checked here go to the provider as sent.
 */

const STATEFUL: Array<[param: string, used: (v: unknown) => boolean, what: string]> = [
  ['previous_response_id', (v) => !isAbsent(v), 'previous_response_id needs stored responses'],
  ['conversation', (v) => !isAbsent(v), 'conversation needs stored conversations'],
  ['background', (v) => v === true, 'background: true needs stored responses'],
  ['store', (v) => v === true, 'store: true would store the response'],
];

const ENUMS: Array<[path: string, options: readonly string[]]> = [
  ['truncation', ['auto', 'disabled']],
  ['service_tier', ['auto', 'default', 'flex', 'scale', 'priority']],
  ['prompt_cache_retention', ['in_memory', '24h']],
  ['reasoning.effort', ['none', 'minimal', 'low', 'medium', 'high', 'xhigh']],
  ['reasoning.summary', ['auto', 'concise', 'detailed']],
  ['reasoning.generate_summary', ['auto', 'concise', 'detailed']],
  ['reasoning.context', ['auto', 'current_turn', 'all_turns']],
  ['text.verbosity', ['low', 'medium', 'high']],
];

const STRINGS = ['instructions', 'prompt_cache_key', 'safety_identifier', 'user'];
const BOOLEANS = ['stream', 'parallel_tool_calls'];
const OBJECTS = ['reasoning', 'text', 'prompt', 'moderation', 'stream_options'];
const INPUT_ROLES = ['user', 'assistant', 'system', 'developer'];
const ITEM_STATUSES = ['in_progress', 'completed', 'incomplete'];
const TOOL_CHOICES = ['none', 'auto', 'required'];
const TEXT_PARTS = ['input_text', 'output_text'];

/**
 * The `include` values the Responses API defines, each with the tool type (prefix) it needs in `tools`;
 * null when it needs no tool. `message.input_image.image_url` needs a model with image input, checked with the
 * model (checkResponsesForModel).
 */
export const INCLUDE_NEEDS_TOOL: Record<string, string | null> = {
  'web_search_call.action.sources': 'web_search',
  'web_search_call.results': 'web_search',
  'code_interpreter_call.outputs': 'code_interpreter',
  'computer_call_output.output.image_url': 'computer',
  'file_search_call.results': 'file_search',
  'message.input_image.image_url': null,
  'message.output_text.logprobs': null,
  'reasoning.encrypted_content': null,
};

/** Checks a `POST /v1/responses` body; returns it with the public model name still in place. */
export function validateResponsesRequest(raw: unknown): Body {
  const body = checkRequestBody(raw);
  // A stateful field of the wrong type is malformed (400) before it is unsupported (501).
  checkType(body.previous_response_id, 'previous_response_id', 'string');
  check(isAbsent(body.conversation) || typeof body.conversation === 'string' || isObject(body.conversation),
    'conversation', 'conversation must be a conversation id or an object with one');
  checkType(body.background, 'background', 'boolean');
  checkType(body.store, 'store', 'boolean');
  for (const [param, used, what] of STATEFUL) {
    if (used(body[param])) throw new NotImplementedError(`Unsupported: ${what}, and this gateway is stateless`, param);
  }
  checkModel(body);
  check(typeof body.input === 'string' || Array.isArray(body.input) || (body.input === undefined && isObject(body.prompt)),
    'input', 'input must be a string or an array of input items');
  if (Array.isArray(body.input)) checkInputItems(body.input);

  for (const f of STRINGS) checkType(body[f], f, 'string');
  for (const f of ['prompt_cache_key', 'safety_identifier', 'user'] as const) checkCallerIdentifier(body[f], f);
  for (const f of BOOLEANS) checkType(body[f], f, 'boolean');
  for (const f of OBJECTS) checkType(body[f], f, 'object');
  for (const [path, options] of ENUMS) checkEnum(valueAt(body, path), path, options);

  checkNumber(body.temperature, 'temperature', { min: 0, max: 2 });
  checkNumber(body.top_p, 'top_p');
  checkNumber(body.top_logprobs, 'top_logprobs', { min: 0, max: 20, integer: true });
  checkNumber(body.max_output_tokens, 'max_output_tokens', { min: 1, integer: true });
  checkNumber(body.max_tool_calls, 'max_tool_calls', { min: 0, integer: true });
  parseKeyValueMetadata(body.metadata);
  checkObjectArray(body.tools, 'tools');
  checkToolChoice(body.tool_choice, checkFunctionTools(body.tools));
  if (isObject(body.stream_options)) checkType(body.stream_options.include_obfuscation, 'stream_options.include_obfuscation', 'boolean');
  checkObjectArray(body.context_management, 'context_management');
  checkContextManagement(body.context_management);
  checkPrompt(body.prompt);
  if (isObject(body.moderation)) checkType(body.moderation.model, 'moderation.model', 'string');
  checkTextFormat(body.text);
  checkInclude(body.include, body.tools);
  // Logprobs come back only when included: alternatives asked for without them would be silently lost.
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) {
    const included = Array.isArray(body.include) && body.include.includes('message.output_text.logprobs');
    check(included, 'top_logprobs', 'top_logprobs needs include: ["message.output_text.logprobs"]');
  }
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, i) => {
      for (const f of ['parameters', 'input_schema'] as const) if (!isAbsent((tool as Body)[f])) checkFreeForm((tool as Body)[f], `tools[${i}].${f}`);
    });
  }
  // Last, so a bound broken inside a free-form object checked above is named by its own param.
  checkBodyDepth(body);
  return body;
}

function checkInputItems(items: unknown[]): void {
  items.forEach((item, i) => {
    const p = `input[${i}]`;
    check(isObject(item), p, `${p} must be an object`);
    const it = item as Body;
    checkEnum(it.role, `${p}.role`, INPUT_ROLES);
    checkEnum(it.status, `${p}.status`, ITEM_STATUSES);
    if (!isAbsent(it.content)) check(typeof it.content === 'string' || Array.isArray(it.content), `${p}.content`, `${p}.content must be a string or an array of content parts`);
    if (Array.isArray(it.content)) checkTypedParts(it.content, `${p}.content`, TEXT_PARTS);
    check(typeof it.type === 'string' || typeof it.role === 'string', `${p}.type`, `${p} needs a type or a role`);
  });
}

/** The names of the function tools, each checked. */
function checkFunctionTools(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  const names: string[] = [];
  tools.forEach((tool, i) => {
    if ((tool as Body).type === 'function') names.push(checkFunctionName((tool as Body).name, `tools[${i}].name`));
  });
  return names;
}

/** A choice of one function names a declared function tool. */
function checkToolChoice(choice: unknown, functionNames: string[]): void {
  if (isAbsent(choice)) return;
  if (typeof choice === 'string') return checkEnum(choice, 'tool_choice', TOOL_CHOICES);
  check(isObject(choice) && typeof choice.type === 'string', 'tool_choice', `tool_choice must be one of ${TOOL_CHOICES.join(', ')} or an object with a type`);
  const c = choice as Body;
  checkEnum(c.mode, 'tool_choice.mode', ['auto', 'required']);
  if (c.type === 'function') {
    check(typeof c.name === 'string' && functionNames.includes(c.name), 'tool_choice.name', 'tool_choice names a function that tools does not declare');
  }
}

function checkObjectArray(value: unknown, param: string): void {
  if (isAbsent(value)) return;
  check(Array.isArray(value), param, `${param} must be an array`);
  (value as unknown[]).forEach((item, i) => {
    check(isObject(item) && typeof item.type === 'string', `${param}[${i}].type`, `${param}[${i}] must be an object with a type`);
  });
}

/** `a.b` -> body.a.b, undefined when any step is missing (the object check names a non-object parent). */
function valueAt(body: Body, path: string): unknown {
  let value: unknown = body;
  for (const key of path.split('.')) value = isObject(value) ? value[key] : undefined;
  return value;
}

function checkContextManagement(value: unknown): void {
  if (!Array.isArray(value)) return;
  value.forEach((item, i) => {
    const p = `context_management[${i}]`;
    checkEnum((item as Body).type, `${p}.type`, ['compaction']);
    checkNumber((item as Body).compact_threshold, `${p}.compact_threshold`, { min: 0 });
  });
}

function checkPrompt(prompt: unknown): void {
  if (!isObject(prompt)) return;
  check(typeof prompt.id === 'string' && prompt.id.length > 0, 'prompt.id', 'prompt.id is required and must be a string');
  checkType(prompt.variables, 'prompt.variables', 'object');
  if (!isAbsent(prompt.variables)) checkFreeForm(prompt.variables, 'prompt.variables');
  checkType(prompt.version, 'prompt.version', 'string');
}

function checkTextFormat(text: unknown): void {
  if (!isObject(text) || isAbsent(text.format)) return;
  checkType(text.format, 'text.format', 'object');
  const format = text.format as Body;
  checkEnum(format.type, 'text.format.type', ['text', 'json_object', 'json_schema']);
  if (format.type !== 'json_schema') return;
  check(typeof format.name === 'string' && format.name.length > 0, 'text.format.name', 'text.format.name is required for json_schema');
  check(isObject(format.schema), 'text.format.schema', 'text.format.schema is required and must be a JSON schema object');
  checkFreeForm(format.schema, 'text.format.schema');
}

/** Each include value is known, and the tool it reports on is among the request's tools. */
function checkInclude(include: unknown, tools: unknown): void {
  if (isAbsent(include)) return;
  check(Array.isArray(include) && include.every((s) => typeof s === 'string'), 'include', 'include must be an array of strings');
  const toolTypes = Array.isArray(tools) ? tools.map((t) => String((t as Body).type)) : [];
  (include as string[]).forEach((value, i) => {
    const p = `include[${i}]`;
    check(Object.hasOwn(INCLUDE_NEEDS_TOOL, value), p, `${p} must be one of ${Object.keys(INCLUDE_NEEDS_TOOL).join(', ')}`);
    const tool = INCLUDE_NEEDS_TOOL[value];
    if (tool) check(toolTypes.some((t) => t.startsWith(tool)), p, `${p} (${value}) needs a ${tool} tool in tools`);
  });
}
