import type { ChatCompletionRequest } from '@gw/provider-spec';

/**
 * What happens to each request field on the way to one upstream wire format. A Record over every key of the
 * request, so a new request field does not compile until each provider has decided its fate.
 */
export type RequestFieldPolicy<Fate> = Record<keyof ChatCompletionRequest, Fate>;

/**
 * The fields whose fate is the same for every upstream: the gateway's own settings and the Responses API's
 * state, which never go upstream, and extra_body, which each provider merges into its body (keeping the fields
 * that decide what the answer looks like to its parser).
 */
export const GATEWAY_FIELD_POLICY = {
  context_length: 'drop', // a routing hint for the gateway
  previous_response_id: 'drop', // Responses API state; chat completions are stateless
  conversation: 'drop', // Responses API state
  store: 'drop', // would store caller data at the provider under the gateway's account
  truncation: 'drop', // Responses API only
  include: 'drop', // Responses API only
  metadata: 'drop', // the caller's metadata for the gateway
  extra_body: 'convert', // merged into the body
  provider_options: 'drop', // consumed by routing
  schema_params: 'drop', // gateway structured-output settings; response_format carries the schema upstream
  network_search: 'drop', // a gateway feature, not an upstream parameter
} as const satisfies Partial<RequestFieldPolicy<'drop' | 'convert'>>;
