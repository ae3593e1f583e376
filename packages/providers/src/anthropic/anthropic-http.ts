import type { IncomingHttpHeaders } from 'node:http';
import type { ChatTarget } from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import type { OriginPools } from '../http/origin-pools';
import { headerValue, jsonRequestHeaders, postUpstream } from '../http/post-upstream';
import { mapAnthropicHttpError } from './anthropic-error';

/** The Messages API version whose shapes anthropic-api.ts describes. */
export const ANTHROPIC_VERSION = '2023-06-01';

export interface MessagesCall {
  body: string;
  stream: boolean;
  /** Client headers of a native call; only `anthropic-*` ones are taken, and they win over ours. */
  clientHeaders?: Record<string, string>;
}

/**
 * POSTs to `{baseUrl}/messages` (or `/messages/count_tokens`, which takes the same body less `max_tokens`);
 * resolves on 2xx headers, throws the mapped error for any other status.
 */
export function postMessages(pools: OriginPools, target: ChatTarget, call: MessagesCall, deadline: Deadline, endpoint: '/messages' | '/messages/count_tokens' = '/messages'): Promise<UpstreamAnswer> {
  return postUpstream(pools, target, {
    endpoint,
    headers: requestHeaders(target, call),
    body: call.body,
    eventStream: call.stream,
    deadline,
    mapError: mapAnthropicHttpError,
  });
}

/** The headers of a Messages API call: JSON, the API version, the credential, and a native call's own `anthropic-*` headers. */
export function requestHeaders(target: ChatTarget, call: MessagesCall): Record<string, string> {
  const headers = jsonRequestHeaders(target, call.stream);
  headers['anthropic-version'] = ANTHROPIC_VERSION;
  if (target.apiKey) headers['x-api-key'] = target.apiKey;
  for (const [name, value] of Object.entries(call.clientHeaders ?? {})) {
    const lower = name.toLowerCase();
    if (lower.startsWith('anthropic-')) headers[lower] = value;
  }
  return headers;
}

/** Anthropic's correlation id, sent on every answer as `request-id`. */
export function anthropicRequestId(headers: IncomingHttpHeaders): string | undefined {
  return headerValue(headers, 'request-id');
}
