import type { Dispatcher } from 'undici';
import type { ChatTarget } from '@gw/provider-spec';
import type { Deadline } from './deadline';
import type { OriginPools } from './origin-pools';
import { readCappedText } from './read-capped-text';
import { mapUpstreamHttpError, type UpstreamErrorDetail } from './upstream-errors';

const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface UpstreamPost {
  /** Path below the target's base URL, e.g. `/chat/completions`. */
  endpoint: string;
  headers: Record<string, string>;
  body: string;
  deadline: Deadline;
  /** Reads the wire format's error body. */
  parseError: (text: string) => UpstreamErrorDetail;
}

/** POSTs on the pooled origin of `target`; a 2xx answer is returned, anything else thrown as the mapped error. */
export async function postUpstream(pools: OriginPools, target: ChatTarget, post: UpstreamPost): Promise<Dispatcher.ResponseData> {
  const { pool, path } = pools.route(target.baseUrl, post.endpoint);
  const res = await pool.request({
    method: 'POST',
    path,
    headers: post.headers,
    body: post.body,
    signal: post.deadline.signal,
    headersTimeout: target.timeoutMs,
    bodyTimeout: target.timeoutMs,
  });
  if (res.statusCode >= 200 && res.statusCode < 300) return res;
  const text = await readCappedText(res.body, MAX_ERROR_BODY_BYTES);
  throw mapUpstreamHttpError(res.statusCode, res.headers, post.parseError(text));
}
