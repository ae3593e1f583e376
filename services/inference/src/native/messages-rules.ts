import { checkBodyDepth, checkFreeForm } from '../validation/json-bounds';
import { check, checkModel, checkNumber, checkRequestBody, checkType, isObject, type Body } from './body-checks';

/**
 * The gateway's own checks of a `POST /v1/messages` body (the payload is provider-native; the provider
 * judges the rest): a model, a non-empty conversation, and the output cap the messages format requires.
 */

const ROLES = ['user', 'assistant'];

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
  });
  checkNumber(body.max_tokens, 'max_tokens', { min: 1, integer: true });
  checkType(body.stream, 'stream', 'boolean');
  checkType(body.metadata, 'metadata', 'object');
  if (isObject(body.metadata)) checkFreeForm(body.metadata, 'metadata');
  if (Array.isArray(body.tools)) {
    body.tools.forEach((tool, i) => { if (isObject(tool) && tool.input_schema !== undefined) checkFreeForm(tool.input_schema, `tools[${i}].input_schema`); });
  }
  // Last, so a bound broken inside a free-form object checked above is named by its own param.
  checkBodyDepth(body);
  return body;
}
