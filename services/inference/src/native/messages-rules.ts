import { checkBodyDepth, checkFreeForm } from '@gw/platform';
import { checkCallerIdentifier } from '../validation/caller-identifiers';
import { checkFunctionName, MESSAGES_TOOL_NAME_MAX_CHARS } from '../validation/function-names';
import { check, checkEnum, checkModel, checkNumber, checkRequestBody, checkType, checkTypedParts, isAbsent, isObject, type Body } from './body-checks';

/**
 * The gateway's own checks of a `POST /v1/messages` body (the payload is provider-native): a model, a non-empty
 * conversation, the output cap the messages format requires, and the fields whose rules the Messages API
 * documents (sampling ranges, text blocks, stop sequences, tool choice, the thinking budget), so a body the
 * provider would refuse is a 400 here. The provider judges the rest.
 */

const ROLES = ['user', 'assistant'];
const TOOL_CHOICES = ['auto', 'any', 'tool', 'none'];
const TEXT_BLOCKS = ['text'];
/** The least thinking budget the Messages API takes. */
const MIN_THINKING_BUDGET = 1024;

export function validateMessagesRequest(raw: unknown): Body {
  const body = validateMessagesBody(raw);
  check(body.max_tokens !== undefined, 'max_tokens', 'max_tokens is required');
  return body;
}

/** `POST /v1/messages/count_tokens`: the same body, without the required output cap (nothing is generated). */
export function validateCountTokensRequest(raw: unknown): Body {
  return validateMessagesBody(raw);
}

function validateMessagesBody(raw: unknown): Body {
  const body = checkRequestBody(raw);
  checkModel(body);
  check(Array.isArray(body.messages) && body.messages.length > 0, 'messages', 'messages must be a non-empty array');
  (body.messages as unknown[]).forEach((m, i) => {
    const p = `messages[${i}]`;
    check(isObject(m), p, `${p} must be an object`);
    const msg = m as Body;
    check(typeof msg.role === 'string' && ROLES.includes(msg.role), `${p}.role`, `${p}.role must be one of ${ROLES.join(', ')}`);
    check(typeof msg.content === 'string' || Array.isArray(msg.content), `${p}.content`, `${p}.content must be a string or an array of content blocks`);
    if (Array.isArray(msg.content)) checkTypedParts(msg.content, `${p}.content`, TEXT_BLOCKS);
  });
  if (!isAbsent(body.system)) {
    check(typeof body.system === 'string' || Array.isArray(body.system), 'system', 'system must be a string or an array of text blocks');
    if (Array.isArray(body.system)) checkTypedParts(body.system, 'system', TEXT_BLOCKS);
  }
  checkNumber(body.max_tokens, 'max_tokens', { min: 1, integer: true });
  checkNumber(body.temperature, 'temperature', { min: 0, max: 1 });
  checkNumber(body.top_p, 'top_p', { min: 0, max: 1 });
  checkNumber(body.top_k, 'top_k', { min: 0, integer: true });
  checkType(body.stream, 'stream', 'boolean');
  if (!isAbsent(body.stop_sequences)) {
    const ok = Array.isArray(body.stop_sequences) && body.stop_sequences.every((s) => typeof s === 'string');
    check(ok, 'stop_sequences', 'stop_sequences must be an array of strings');
  }
  checkType(body.metadata, 'metadata', 'object');
  if (isObject(body.metadata)) {
    checkType(body.metadata.user_id, 'metadata.user_id', 'string');
    checkCallerIdentifier(body.metadata.user_id, 'metadata.user_id');
    checkFreeForm(body.metadata, 'metadata');
  }
  const toolNames: unknown[] = [];
  if (!isAbsent(body.tools)) {
    check(Array.isArray(body.tools), 'tools', 'tools must be an array');
    (body.tools as unknown[]).forEach((tool, i) => {
      check(isObject(tool), `tools[${i}]`, `tools[${i}] must be an object`);
      const t = tool as Body;
      // A custom tool (no type, or `custom`) is the caller's own: its name and input schema are the caller's to get
      // right. A server tool's type fixes its name.
      if (t.type === undefined || t.type === 'custom') {
        checkFunctionName(t.name, `tools[${i}].name`, MESSAGES_TOOL_NAME_MAX_CHARS);
        check(isObject(t.input_schema), `tools[${i}].input_schema`, `tools[${i}].input_schema is required: a JSON schema object`);
      }
      toolNames.push(t.name);
      if (t.input_schema !== undefined) checkFreeForm(t.input_schema, `tools[${i}].input_schema`);
    });
  }
  checkToolChoice(body.tool_choice, toolNames);
  checkThinking(body.thinking);
  // Last, so a bound broken inside a free-form object checked above is named by its own param.
  checkBodyDepth(body);
  return body;
}

/** One of the Messages API's choices; `tool` names one of the request's tools. */
function checkToolChoice(choice: unknown, toolNames: unknown[]): void {
  if (isAbsent(choice)) return;
  check(isObject(choice), 'tool_choice', `tool_choice must be an object with a type (${TOOL_CHOICES.join(', ')})`);
  const c = choice as Body;
  check(typeof c.type === 'string', 'tool_choice.type', `tool_choice.type must be one of ${TOOL_CHOICES.join(', ')}`);
  checkEnum(c.type, 'tool_choice.type', TOOL_CHOICES);
  checkType(c.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use', 'boolean');
  if (c.type === 'tool') check(typeof c.name === 'string' && toolNames.includes(c.name), 'tool_choice.name', 'tool_choice names a tool that tools does not declare');
}

/** Extended thinking, when enabled, needs a budget of at least 1,024 tokens. */
function checkThinking(thinking: unknown): void {
  if (isAbsent(thinking)) return;
  check(isObject(thinking) && typeof thinking.type === 'string', 'thinking', 'thinking must be an object with a type');
  const t = thinking as Body;
  if (t.type === 'enabled') {
    checkNumber(t.budget_tokens, 'thinking.budget_tokens', { min: MIN_THINKING_BUDGET, integer: true });
    check(t.budget_tokens !== undefined, 'thinking.budget_tokens', 'thinking.budget_tokens is required when thinking is enabled');
  }
}
