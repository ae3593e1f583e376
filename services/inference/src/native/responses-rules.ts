import { NotImplementedError } from '@gw/platform';
import {
  check, checkEnum, checkModel, checkNumber, checkRequestBody, checkType, isAbsent, isObject, type Body,
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
const BOOLEANS = ['background', 'store', 'stream', 'parallel_tool_calls'];
const OBJECTS = ['reasoning', 'text', 'prompt', 'moderation', 'stream_options'];
const INPUT_ROLES = ['user', 'assistant', 'system', 'developer'];
const ITEM_STATUSES = ['in_progress', 'completed', 'incomplete'];
const TOOL_CHOICES = ['none', 'auto', 'required'];
const MAX_METADATA_PAIRS = 16;

/** Checks a `POST /v1/responses` body; returns it with the public model name still in place. */
export function validateResponsesRequest(raw: unknown): Body {
  const body = checkRequestBody(raw);
  for (const [param, used, what] of STATEFUL) {
    if (used(body[param])) throw new NotImplementedError(`Unsupported: ${what}, and this gateway is stateless`, param);
  }
  checkModel(body);
  check(typeof body.input === 'string' || Array.isArray(body.input) || (body.input === undefined && isObject(body.prompt)),
    'input', 'input must be a string or an array of input items');
  if (Array.isArray(body.input)) checkInputItems(body.input);

  for (const f of STRINGS) checkType(body[f], f, 'string');
  for (const f of BOOLEANS) checkType(body[f], f, 'boolean');
  for (const f of OBJECTS) checkType(body[f], f, 'object');
  for (const [path, options] of ENUMS) checkEnum(valueAt(body, path), path, options);

  checkNumber(body.temperature, 'temperature', { min: 0, max: 2 });
  checkNumber(body.top_p, 'top_p');
  checkNumber(body.top_logprobs, 'top_logprobs', { min: 0, max: 20, integer: true });
  checkNumber(body.max_output_tokens, 'max_output_tokens', { min: 1, integer: true });
  checkNumber(body.max_tool_calls, 'max_tool_calls', { min: 0, integer: true });
  checkMetadata(body.metadata);
  checkToolChoice(body.tool_choice);
  checkObjectArray(body.tools, 'tools');
  checkObjectArray(body.context_management, 'context_management');
  if (!isAbsent(body.include)) {
    check(Array.isArray(body.include) && body.include.every((s) => typeof s === 'string'), 'include', 'include must be an array of strings');
  }
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
    check(typeof it.type === 'string' || typeof it.role === 'string', `${p}.type`, `${p} needs a type or a role`);
  });
}

function checkMetadata(metadata: unknown): void {
  if (isAbsent(metadata)) return;
  check(isObject(metadata), 'metadata', 'metadata must be an object of string values');
  const entries = Object.entries(metadata as Body);
  check(entries.length <= MAX_METADATA_PAIRS, 'metadata', `metadata accepts at most ${MAX_METADATA_PAIRS} key-value pairs`);
  for (const [key, value] of entries) check(typeof value === 'string', `metadata.${key}`, `metadata.${key} must be a string`);
}

function checkToolChoice(choice: unknown): void {
  if (isAbsent(choice)) return;
  if (typeof choice === 'string') return checkEnum(choice, 'tool_choice', TOOL_CHOICES);
  check(isObject(choice) && typeof choice.type === 'string', 'tool_choice', `tool_choice must be one of ${TOOL_CHOICES.join(', ')} or an object with a type`);
  checkEnum((choice as Body).mode, 'tool_choice.mode', ['auto', 'required']);
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
