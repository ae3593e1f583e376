import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { ChatTarget } from '@gw/provider-spec';
import type { Deadline } from '../http/deadline';
import type { OriginPools } from '../http/origin-pools';
import { readCappedText } from '../http/read-capped-text';
import { malformedUpstreamError } from '../http/upstream-errors';
import { mapAnthropicHttpError } from './anthropic-error';

/** The Messages API version whose shapes anthropic-api.ts describes. */
export const ANTHROPIC_VERSION = '2023-06-01';
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface MessagesCall {
  body: string;
  stream: boolean;
  /** Client headers of a native call; only `anthropic-*` ones are taken, and they win over ours. */
  clientHeaders?: Record<string, string>;
}

/** POSTs to `{baseUrl}/messages`; resolves on 2xx headers, throws the mapped error for any other status. */
export async function postMessages(pools: OriginPools, target: ChatTarget, call: MessagesCall, deadline: Deadline): Promise<Dispatcher.ResponseData> {
  const { pool, path } = pools.route(target.baseUrl, '/messages');
  const res = await pool.request({
    method: 'POST',
    path,
    headers: requestHeaders(target, call),
    body: call.body,
    signal: deadline.signal,
    headersTimeout: target.timeoutMs,
    bodyTimeout: target.timeoutMs,
  });
  if (res.statusCode >= 200 && res.statusCode < 300) return res;
  throw mapAnthropicHttpError(res.statusCode, res.headers, await readCappedText(res.body, MAX_ERROR_BODY_BYTES));
}

function requestHeaders(target: ChatTarget, call: MessagesCall): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.extraHeaders ?? {})) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers.accept = call.stream ? 'text/event-stream' : 'application/json';
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
  const id = headers['request-id'];
  return (Array.isArray(id) ? id[0] : id) || undefined;
}

export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformedUpstreamError('response');
  }
}
