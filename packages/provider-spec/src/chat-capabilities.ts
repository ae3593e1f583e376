import type { ChatCompletionRequest } from './chat-request';

/**
 * What one upstream wire format can honour of a chat request, declared by each provider folder and read by
 * routing (a request goes only to a deployment that honours every parameter it sets), by the Model objects
 * (`supported_parameters`) and by the provider's own request conversion. A parameter is never dropped
 * silently: one that is set and not honoured is a 400 naming it.
 *  - 'supported':   honoured with its meaning
 *  - 'unsupported': refused whenever it is set
 *  - { honouredWhen }: only some values can be honoured (e.g. `n: 1`); `values` says which, for the message
 */
export type ParameterSupport = 'supported' | 'unsupported' | { honouredWhen: (value: unknown) => boolean; values: string };

export interface ChatCapabilities {
  /** A Record over every request field, so a new field does not compile until each provider has decided. */
  parameters: Record<keyof ChatCompletionRequest, ParameterSupport>;
  /**
   * Upstream body fields (dotted paths for nested ones) the provider builds from validated request fields;
   * `extra_body` may not set them, or it would bypass that validation.
   */
  reservedBodyFields: readonly string[];
}

/** Why a request cannot go to a provider: the offending param and a message for the 400. */
export interface UnsupportedInRequest {
  param: string;
  message: string;
  code: 'unsupported_parameter';
}

/** Every field of the chat request body, at runtime (the Record makes a new field a compile error here). */
const CHAT_REQUEST_FIELD_SET: Record<keyof ChatCompletionRequest, true> = {
  model: true, messages: true, temperature: true, top_p: true, frequency_penalty: true, presence_penalty: true,
  max_completion_tokens: true, max_tokens: true, top_k: true, context_length: true, stream: true, stream_options: true,
  tools: true, tool_choice: true, parallel_tool_calls: true, previous_response_id: true, conversation: true,
  prompt_cache_key: true, user: true, safety_identifier: true, store: true, truncation: true, include: true, metadata: true, extra_body: true,
  provider_options: true, schema_params: true, network_search: true, reasoning: true, response_format: true,
  logprobs: true, top_logprobs: true, stop: true, verbosity: true, seed: true, n: true, logit_bias: true,
};
export const CHAT_REQUEST_FIELDS = Object.keys(CHAT_REQUEST_FIELD_SET) as ReadonlyArray<keyof ChatCompletionRequest>;

/**
 * Request fields `extra_body` may not name: each is validated (or set by the gateway) under its own name, and
 * extra_body is merged into the upstream body after that. `metadata` is the exception: the caller's metadata
 * stays with the gateway, so `extra_body.metadata` can only be the provider's own field of that name.
 */
export const EXTRA_BODY_RESERVED_FIELDS: readonly string[] = CHAT_REQUEST_FIELDS.filter((f) => f !== 'metadata');

const isSet = (value: unknown): boolean => value !== undefined && value !== null;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Restriction = [keyof ChatCompletionRequest, Exclude<ParameterSupport, 'supported'>];
/** Per capabilities object, the parameters it does not honour in full: routing asks several times per request. */
const restrictionsOf = new WeakMap<ChatCapabilities, Restriction[]>();

function restrictions(capabilities: ChatCapabilities): Restriction[] {
  let list = restrictionsOf.get(capabilities);
  if (!list) {
    list = (Object.entries(capabilities.parameters) as Array<[keyof ChatCompletionRequest, ParameterSupport]>)
      .filter((entry): entry is Restriction => entry[1] !== 'supported');
    restrictionsOf.set(capabilities, list);
  }
  return list;
}

/** The first parameter of `req` the provider cannot honour, or an extra_body key it reserves; null when none. */
export function findUnsupported(capabilities: ChatCapabilities, req: ChatCompletionRequest): UnsupportedInRequest | null {
  for (const [field, support] of restrictions(capabilities)) {
    const value = req[field];
    if (!isSet(value)) continue;
    if (support === 'unsupported') {
      return { param: field, message: `${field} is not supported by this model's provider`, code: 'unsupported_parameter' };
    }
    if (!support.honouredWhen(value)) {
      return { param: field, message: `${field} is supported by this model's provider only as ${support.values}`, code: 'unsupported_parameter' };
    }
  }
  const extra = req.extra_body;
  if (isObject(extra)) {
    for (const path of capabilities.reservedBodyFields) {
      if (isSet(valueAt(extra, path))) {
        return { param: `extra_body.${path}`, message: `extra_body.${path} is set by the gateway from validated fields and cannot be overridden`, code: 'unsupported_parameter' };
      }
    }
  }
  return null;
}

/**
 * The request parameters a provider honours, for `supported_parameters`. One honoured only at its neutral
 * value (`n: 1`, `store: false`) is not listed: setting it changes nothing.
 */
export function honouredParameters(capabilities: ChatCapabilities): string[] {
  return Object.entries(capabilities.parameters)
    .filter(([, support]) => support === 'supported')
    .map(([field]) => field);
}

function valueAt(obj: Record<string, unknown>, path: string): unknown {
  let value: unknown = obj;
  for (const key of path.split('.')) value = isObject(value) ? value[key] : undefined;
  return value;
}
