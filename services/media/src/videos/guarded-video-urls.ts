import { Readable } from 'node:stream';
import { PayloadTooLargeError, TimeoutError, UpstreamError } from '@gw/platform';
import { OutboundRequestError, OutboundUrlError, type GuardedHttpClient } from '@gw/net-guard';
import { markRetryable, VIDEO_DOWNLOAD_REFUSED, type ForeignUrlOpener } from '@gw/provider-spec';

/**
 * The video adapters' opener for result URLs off a provider's own origin: the media service's guarded client
 * (every resolved address public, the checked address pinned, redirects re-checked, https only), the body
 * streamed and capped at `maxBytes`. Its refusals and failures become the typed, retry-tagged errors the
 * video poller decides on: a refused URL fails the video, a lost connection is tried again.
 */
export function guardedVideoUrls(client: GuardedHttpClient, maxBytes: number): ForeignUrlOpener {
  return {
    async open(url, { timeoutMs, signal }) {
      try {
        const opened = await client.open(url, { timeoutMs, signal, maxBytes, param: 'video_url' });
        return { status: opened.status, contentType: opened.contentType, body: Readable.from(mappedErrors(opened.body)) };
      } catch (err) {
        throw asVideoDownloadError(err);
      }
    },
  };
}

async function* mappedErrors(body: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const part of body) yield part as Buffer;
  } catch (err) {
    throw asVideoDownloadError(err);
  } finally {
    body.destroy();
  }
}

function asVideoDownloadError(err: unknown): unknown {
  if (err instanceof OutboundUrlError) {
    return markRetryable(new UpstreamError(`The provider named a video URL the gateway does not fetch: ${err.message}`, undefined, VIDEO_DOWNLOAD_REFUSED), false);
  }
  if (!(err instanceof OutboundRequestError)) return err;
  switch (err.kind) {
    case 'too_large':
      return markRetryable(new PayloadTooLargeError(`The finished video is too large: ${err.message}`), false);
    case 'timeout':
      return markRetryable(new TimeoutError('The video download timed out'), true);
    case 'too_many_redirects':
    case 'bad_redirect':
      return markRetryable(new UpstreamError(`The provider's video URL redirects where the gateway does not follow: ${err.message}`, undefined, VIDEO_DOWNLOAD_REFUSED), false);
    default:
      return markRetryable(new UpstreamError(`The video download failed: ${err.message}`), true);
  }
}
