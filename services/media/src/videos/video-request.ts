import type { CatalogModel } from '@gw/catalog';
import { InputError, rejectUnknownFields } from '@gw/platform';
import { VIDEO_PARAMETERS, type VideoGenerationRequest, type VideoParameter } from '@gw/provider-spec';
import { MAX_ID_FIELD_CHARS, MAX_TEXT_FIELD_CHARS, typeMatches } from '../validation/request-fields';

/** The gateway's own fields of POST /v1/videos, beside the generation parameters. */
export interface VideoGatewayFields {
  model: string;
  callbackUrl: string | null;
  /** The caller's business id, echoed in the callback. */
  callerRequestId: string | null;
}

export interface NormalizedVideoRequest extends VideoGatewayFields {
  request: VideoGenerationRequest;
}

export interface NativeVideoRequest extends VideoGatewayFields {
  /** The supplier-native body without the gateway's fields. */
  body: Record<string, unknown>;
  prompt: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function requireBody(body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw new InputError('The request body must be a JSON object', null);
  return body;
}

function gatewayFields(body: Record<string, unknown>): VideoGatewayFields {
  if (typeof body.model !== 'string' || body.model === '') throw new InputError('model is required', 'model');
  const callbackUrl = body.callback_url;
  if (callbackUrl !== undefined && callbackUrl !== null && typeof callbackUrl !== 'string') throw new InputError('callback_url must be a string', 'callback_url');
  const callerRequestId = body.request_id;
  if (callerRequestId !== undefined && callerRequestId !== null
    && (typeof callerRequestId !== 'string' || callerRequestId.length === 0 || callerRequestId.length > MAX_ID_FIELD_CHARS)) {
    throw new InputError(`request_id must be a string of 1 to ${MAX_ID_FIELD_CHARS} characters`, 'request_id');
  }
  return { model: body.model, callbackUrl: (callbackUrl as string | undefined) ?? null, callerRequestId: (callerRequestId as string | undefined) ?? null };
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set(['model', 'prompt', 'callback_url', 'request_id', ...VIDEO_PARAMETERS]);

/** The normalized body, every field checked; a field the gateway does not know is a 400 naming it. */
export function parseVideoRequest(raw: unknown): NormalizedVideoRequest {
  const body = requireBody(raw);
  rejectUnknownFields(body, KNOWN_FIELDS);
  const fields = gatewayFields(body);
  if (typeof body.prompt !== 'string' || body.prompt.trim() === '') throw new InputError('prompt is required', 'prompt');
  if (body.prompt.length > MAX_TEXT_FIELD_CHARS) throw new InputError(`prompt may have at most ${MAX_TEXT_FIELD_CHARS} characters`, 'prompt');
  const request: VideoGenerationRequest = { prompt: body.prompt };
  for (const param of VIDEO_PARAMETERS) {
    if (body[param] !== undefined && body[param] !== null) (request as unknown as Record<string, unknown>)[param] = body[param];
  }
  return { ...fields, request };
}

/**
 * A supplier-native body: taken as given, but for the gateway's fields (`callback_url`, `request_id`), which
 * the gateway keeps for itself: a provider-side callback would bypass the address guard and the outbox.
 * Its `asset://` references are checked and replaced by the service.
 */
export function parseNativeVideoRequest(raw: unknown): NativeVideoRequest {
  const body = requireBody(raw);
  const fields = gatewayFields(body);
  const { callback_url: _callback, request_id: _requestId, ...rest } = body;
  return { ...fields, body: rest, prompt: nativePrompt(rest) };
}

/**
 * The prompt of a native body, for the Video task: `prompt`, or the first text item of `content`. The task keeps
 * it, so it is held to the normalized prompt's bound (a 400 naming where it was).
 */
function nativePrompt(body: Record<string, unknown>): string {
  const bounded = (prompt: string, param: string) => {
    if (prompt.length > MAX_TEXT_FIELD_CHARS) throw new InputError(`${param} may have at most ${MAX_TEXT_FIELD_CHARS} characters`, param);
    return prompt;
  };
  if (typeof body.prompt === 'string') return bounded(body.prompt, 'prompt');
  if (Array.isArray(body.content)) {
    const at = body.content.findIndex((c) => isObject(c) && c.type === 'text' && typeof c.text === 'string');
    if (at >= 0) return bounded((body.content[at] as { text: string }).text, `content[${at}].text`);
  }
  return '';
}

/**
 * Every generation parameter set is checked against the model's `parameter_schema`: a parameter the model
 * does not list, a value of the wrong type, outside `options` or past `min`/`max` is a 400 naming it.
 */
export function checkAgainstSchema(request: VideoGenerationRequest, model: CatalogModel): void {
  for (const param of VIDEO_PARAMETERS) {
    const value = request[param as VideoParameter];
    if (value === undefined) continue;
    const spec = model.parameter_schema[param];
    if (!spec) throw new InputError(`${param} is not supported by model ${model.id}`, param, 'unsupported_parameter');
    if (!typeMatches(spec.type, value)) throw new InputError(`${param} must be of type ${spec.type}`, param, 'invalid_type');
    if (spec.options && !spec.options.includes(value as string | number | boolean)) {
      throw new InputError(`${param} must be one of ${spec.options.join(', ')}`, param, 'invalid_value');
    }
    if (typeof value === 'number') {
      if (spec.min !== null && value < spec.min) throw new InputError(`${param} must be at least ${spec.min}`, param, 'invalid_value');
      if (spec.max !== null && value > spec.max) throw new InputError(`${param} must be at most ${spec.max}`, param, 'invalid_value');
    }
  }
}
