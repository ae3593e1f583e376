import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { traceOutgoing, tracingEnabled } from '@gw/platform';
import type { ChatTarget } from '@gw/provider-spec';
import type { FormData } from 'undici';
import { requestKeepingArrivedBytes, type UpstreamAnswer } from './arrived-bytes-request';
import type { Deadline } from './deadline';
import type { OriginPools } from './origin-pools';
import { readCappedText } from './read-capped-text';

const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface UpstreamPost {
  /** Path below the target's base URL, e.g. `/chat/completions`. */
  endpoint: string;
  /** Query the call adds (e.g. `alt=sse`), after any query of the base URL itself. */
  query?: string;
  headers: Record<string, string>;
  body: string;
  /**
   * An event stream: its body gives every byte that arrived before a failure, then the failure, so the events a
   * provider sent before it cut the stream still reach the client.
   */
  eventStream?: boolean;
  deadline: Deadline;
  /** Maps a non-2xx answer (its status, headers and at most 64 KiB of its body) to the wire format's error. */
  mapError: (status: number, headers: IncomingHttpHeaders, bodyText: string) => Error;
}

/** POSTs on the pooled origin of `target`; a 2xx answer is returned, anything else thrown as the mapped error. */
export function postUpstream(pools: OriginPools, target: ChatTarget, post: UpstreamPost): Promise<UpstreamAnswer> {
  return requestUpstream(pools, target, { ...post, method: 'POST' });
}

export interface UpstreamRequest extends Omit<UpstreamPost, 'body'> {
  method: 'GET' | 'POST' | 'DELETE';
  /** A string, a stream for bodies too large to hold (sent chunked), or a multipart form (undici's own FormData). */
  body?: string | Readable | FormData;
}

/** Any call on the pooled origin of `target`; a 2xx answer is returned, anything else thrown as the mapped error. */
export async function requestUpstream(pools: OriginPools, target: ChatTarget, call: UpstreamRequest): Promise<UpstreamAnswer> {
  const route = pools.route(target.baseUrl, call.endpoint);
  // route() appends the base URL's own query, if any, after the endpoint.
  const path = call.query ? `${route.path}${route.path.includes('?') ? '&' : '?'}${call.query}` : route.path;
  // A client span per provider call (a copy of the headers takes its traceparent); a plain call when tracing is off.
  const headers = tracingEnabled() ? { ...call.headers } : call.headers;
  const res = await traceOutgoing<UpstreamAnswer>('gateway.providers', `${call.method} ${call.endpoint}`,
    () => ({ 'http.request.method': call.method, 'server.address': new URL(target.baseUrl).host, 'url.path': call.endpoint }),
    headers,
    () => {
      const options = {
        method: call.method,
        path,
        headers,
        body: call.body,
        signal: call.deadline.signal,
        headersTimeout: target.timeoutMs,
        bodyTimeout: target.timeoutMs,
      };
      return call.eventStream ? requestKeepingArrivedBytes(route.pool, options) : route.pool.request(options);
    },
    (r) => r.statusCode);
  if (res.statusCode >= 200 && res.statusCode < 300) return res;
  const text = await readCappedText(res.body, MAX_ERROR_BODY_BYTES);
  throw call.mapError(res.statusCode, res.headers, text);
}

/**
 * The headers every JSON call sends: the target's extra headers (names lower-cased), then the content type and
 * what it accepts back. The wire format adds its credential after these.
 */
export function jsonRequestHeaders(target: ChatTarget, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.extraHeaders ?? {})) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers.accept = stream ? 'text/event-stream' : 'application/json';
  return headers;
}

/** A single-valued answer header (the first, when repeated); undefined when absent or empty. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}
