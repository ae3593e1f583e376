import { InputError } from '@gw/platform';
import { EXTRA_BODY_RESERVED_FIELDS, findUnsupported, type ChatCapabilities, type ChatCompletionRequest, type ParameterSupport } from '@gw/provider-spec';

const isEmptyObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/**
 * The fields whose support is the same for every upstream: the gateway's own fields. No route implements the
 * routing hints, web search or the Responses API's state, so those are refused when set (beyond their neutral
 * value) rather than accepted and ignored.
 */
export const GATEWAY_PARAMETERS = {
  model: 'supported', // replaced by the target's provider model id
  messages: 'supported',
  stream: 'supported', // set by the call kind
  stream_options: 'supported', // usage is always asked for upstream; include_usage decides what the caller sees
  metadata: 'supported', // the caller's metadata for the gateway; never sent upstream
  extra_body: 'supported', // merged into the upstream body, minus each provider's reservedBodyFields
  context_length: 'unsupported', // a model's window is fixed by the catalogue; no route chooses by it
  provider_options: 'unsupported', // no upstream configuration is taken from callers
  network_search: { honouredWhen: (v) => v === false, values: 'false' }, // no route searches the web
  previous_response_id: 'unsupported', // Responses API state; chat completions are stateless
  conversation: 'unsupported', // Responses API state
  store: { honouredWhen: (v) => v === false, values: 'false' }, // nothing is stored, here or upstream
  truncation: { honouredWhen: (v) => v === 'disabled', values: 'disabled' }, // chat never truncates a prompt
  include: { honouredWhen: (v) => Array.isArray(v) && v.length === 0, values: 'an empty array' }, // Responses API only
  schema_params: { honouredWhen: isEmptyObject, values: 'an empty object' }, // response_format carries the schema
} as const satisfies Partial<Record<keyof ChatCompletionRequest, ParameterSupport>>;

/** Upstream body fields extra_body may never set: the request's own fields plus the provider's spellings of them. */
export function reservedBodyFields(providerFields: readonly string[]): readonly string[] {
  return [...new Set([...EXTRA_BODY_RESERVED_FIELDS, ...providerFields])];
}

/** The same check routing makes, repeated at conversion so a provider never sends what it cannot honour. */
export function rejectUnsupported(capabilities: ChatCapabilities, req: ChatCompletionRequest): void {
  const found = findUnsupported(capabilities, req);
  if (found) throw new InputError(found.message, found.param, found.code);
}
