import type { IncomingHttpHeaders } from 'node:http';
import { NotFoundError } from '@gw/platform';
import { markRetryable } from '@gw/provider-spec';
import type { ChatTarget, ForeignUrlOpener, VideoContent } from '@gw/provider-spec';
import { malformedUpstreamError, type TaggedError } from './upstream-errors';
import type { OriginPools } from './origin-pools';
import { openUpstreamStream } from './upstream-call';
import { readCappedText } from './read-capped-text';

/**
 * The error mapper of a video task call: as the wire format's, but a 404 is the upstream task gone (expired,
 * deleted, another account), not a model the provider does not know.
 */
export function videoTaskCallErrors(mapError: (status: number, headers: IncomingHttpHeaders, bodyText: string) => TaggedError) {
  return (status: number, headers: IncomingHttpHeaders, bodyText: string): TaggedError =>
    status === 404
      ? markRetryable(new NotFoundError('The provider has no such video task', null, 'upstream_task_not_found'), false)
      : mapError(status, headers, bodyText);
}

/**
 * Streams a finished video (or its last frame) from a URL the provider gave. A URL on the provider's own
 * configured origin (operator-trusted) is read through the provider's pools; any other goes through
 * `foreignUrls`, the gateway's address guard: a provider answer cannot point the gateway at an internal address.
 */
export async function downloadVideoFrom(
  pools: OriginPools,
  foreignUrls: ForeignUrlOpener,
  target: ChatTarget,
  url: string,
  mapError: (status: number, headers: IncomingHttpHeaders, bodyText: string) => TaggedError,
  signal?: AbortSignal,
): Promise<VideoContent> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw malformedUpstreamError('video URL');
  }
  if (parsed.origin !== new URL(target.baseUrl).origin) {
    const opened = await foreignUrls.open(parsed.href, { timeoutMs: target.timeoutMs, signal });
    if (opened.status < 200 || opened.status >= 300) throw mapError(opened.status, {}, await readCappedText(opened.body, 64 * 1024));
    return { body: opened.body, contentType: opened.contentType ?? 'video/mp4' };
  }
  const { res, deadline } = await openUpstreamStream(target, signal, async (d) => {
    const answer = await pools.forOrigin(parsed.origin).request({
      method: 'GET', path: parsed.pathname + parsed.search, signal: d.signal, headersTimeout: target.timeoutMs, bodyTimeout: target.timeoutMs,
    });
    if (answer.statusCode >= 200 && answer.statusCode < 300) return answer;
    throw mapError(answer.statusCode, answer.headers, await readCappedText(answer.body, 64 * 1024));
  });
  // Headers arrived: the body's own timeout bounds each gap from here on.
  deadline.dispose();
  const type = res.headers['content-type'];
  return { body: res.body, contentType: typeof type === 'string' ? type : 'video/mp4' };
}
