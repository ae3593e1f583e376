import type { LookupAddress, LookupOptions } from 'node:dns';
import { rootCertificates } from 'node:tls';
import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { cappedChunks } from '@gw/platform';
import { checkOutboundUrl, type CheckedTarget, type OutboundPolicy } from './check-url';

/** A request that could not produce a final answer: the connection, the time limit or the redirects failed it. */
export class OutboundRequestError extends Error {
  constructor(message: string, readonly kind: 'timeout' | 'connection' | 'too_many_redirects' | 'bad_redirect' | 'too_large') {
    super(message);
    this.name = 'OutboundRequestError';
  }
}

export interface GuardedClientOptions extends OutboundPolicy {
  /** Redirects followed per request, each hop checked like the first URL. */
  maxRedirects?: number;
  /** Extra CA certificates (PEM) trusted beside the system's: a test receiver's self-signed certificate. */
  extraCa?: string[];
}

export interface OutboundRequest {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  /** The whole request, every redirect hop included, ends by then. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Names the URL's origin in refusals (`callback_url`, `url`). */
  param: string;
}

export interface OutboundResponse {
  status: number;
  /** The URL that gave the final answer (after redirects). */
  url: string;
  redirects: number;
}

/** The final answer of a `fetch`: its status, where it came from, its type and its (size-checked) body. */
export interface FetchedBody {
  status: number;
  url: string;
  contentType: string | null;
  body: Buffer;
}

/** The final answer of an `open`: its status, where it came from, its type and its body as a size-checked stream. */
export interface OpenedBody {
  status: number;
  url: string;
  contentType: string | null;
  body: Readable;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DEFAULT_MAX_REDIRECTS = 5;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An HTTP client for URLs callers chose. Each hop (the first URL and every redirect) is checked with the
 * address guard and then connected through a dispatcher whose `lookup` answers only the addresses just
 * checked: a DNS answer that changes between the check and the connect (rebinding) is never used.
 */
export class GuardedHttpClient {
  private readonly maxRedirects: number;
  private readonly ca: string[] | undefined;

  constructor(private readonly opts: GuardedClientOptions = {}) {
    this.maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    this.ca = opts.extraCa?.length ? [...rootCertificates, ...opts.extraCa] : undefined;
  }

  /** Sends the request; refused URLs throw `OutboundUrlError`, failed ones `OutboundRequestError`. */
  async send(url: string, req: OutboundRequest): Promise<OutboundResponse> {
    const signal = req.signal ? AbortSignal.any([req.signal, AbortSignal.timeout(req.timeoutMs)]) : AbortSignal.timeout(req.timeoutMs);
    const answer = await this.follow(url, { method: req.method, headers: req.headers, body: req.body, signal, param: req.param });
    try {
      // The answer's body is not used: read it away so the connection ends cleanly.
      await answer.res.body.dump();
    } catch (err) {
      throw requestFailure(err, signal);
    } finally {
      await answer.close();
    }
    return { status: answer.res.statusCode, url: answer.url.href, redirects: answer.redirects };
  }

  /**
   * GETs a URL a caller gave (media to fetch) and reads its body: every hop checked like `send`'s, and a body
   * past `maxBytes` (declared or streamed) refused with `OutboundRequestError` kind `too_large`, unread.
   */
  async fetch(url: string, req: { timeoutMs: number; param: string; maxBytes: number; signal?: AbortSignal; headers?: Record<string, string> }): Promise<FetchedBody> {
    const signal = req.signal ? AbortSignal.any([req.signal, AbortSignal.timeout(req.timeoutMs)]) : AbortSignal.timeout(req.timeoutMs);
    const answer = await this.follow(url, { method: 'GET', headers: req.headers ?? {}, signal, param: req.param });
    try {
      const parts: Buffer[] = [];
      for await (const part of cappedBody(answer.res, req.maxBytes)) parts.push(part);
      return { status: answer.res.statusCode, url: answer.url.href, contentType: contentTypeOf(answer.res), body: Buffer.concat(parts) };
    } catch (err) {
      throw requestFailure(err, signal);
    } finally {
      await answer.close();
    }
  }

  /**
   * GETs a URL and hands back its body as a stream (a video, too large to buffer): every hop checked and pinned
   * like `fetch`'s. `timeoutMs` bounds the wait for the final answer's headers (redirects included) and then
   * each gap in the body; the stream errors with `OutboundRequestError` kind `too_large` once more than
   * `maxBytes` have arrived (a larger declared length is refused before any is read).
   */
  async open(url: string, req: { timeoutMs: number; param: string; maxBytes: number; signal?: AbortSignal; headers?: Record<string, string> }): Promise<OpenedBody> {
    // Only the wait for headers is timed as a whole: the body of a large file may take long, gap by gap.
    const headersDue = new AbortController();
    const timer = setTimeout(() => headersDue.abort(new Error('timed out')), req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, headersDue.signal]) : headersDue.signal;
    let answer: FinalAnswer;
    try {
      answer = await this.follow(url, { method: 'GET', headers: req.headers ?? {}, signal, param: req.param, bodyTimeoutMs: req.timeoutMs });
    } finally {
      clearTimeout(timer);
    }
    let body: AsyncGenerator<Buffer>;
    try {
      body = cappedBody(answer.res, req.maxBytes);
    } catch (err) {
      await answer.close();
      throw err;
    }
    async function* streamed(): AsyncGenerator<Buffer> {
      try {
        for await (const part of body) yield part;
      } catch (err) {
        throw requestFailure(err, signal);
      }
    }
    const stream = Readable.from(streamed());
    // Ended, failed or dropped by its reader (even unread): the connection goes with the stream.
    stream.once('close', () => {
      answer.res.body.destroy();
      void answer.close();
    });
    return { status: answer.res.statusCode, url: answer.url.href, contentType: contentTypeOf(answer.res), body: stream };
  }

  /**
   * Follows `url` to its final (non-redirect) answer. Each hop is checked with the address guard and then
   * connected through a dispatcher pinned to the addresses just checked; the final answer comes back with its
   * body unread and its dispatcher open (the caller closes it). Refusals throw `OutboundUrlError`.
   */
  private async follow(url: string, hop: Hop): Promise<FinalAnswer> {
    let { method, body } = hop;
    let current = url;
    for (let redirects = 0; ; redirects++) {
      const target = await checkOutboundUrl(current, { ...this.opts, param: hop.param });
      const dispatcher = new Agent({ connect: { lookup: pinnedLookup(target), ...(this.ca ? { ca: this.ca } : {}) } });
      const close = () => dispatcher.close().catch(() => undefined);
      let res: Dispatcher.ResponseData;
      try {
        res = await request(target.url, {
          method, body, signal: hop.signal, dispatcher,
          headers: method === 'GET' ? withoutBodyHeaders(hop.headers) : hop.headers,
          ...(hop.bodyTimeoutMs ? { headersTimeout: hop.bodyTimeoutMs, bodyTimeout: hop.bodyTimeoutMs } : {}),
        });
      } catch (err) {
        await close();
        throw requestFailure(err, hop.signal);
      }
      // Abandoning a body aborts it with an error of its own: nobody is left to hear it.
      res.body.on('error', () => undefined);
      const location = res.headers.location;
      if (!REDIRECTS.has(res.statusCode) || typeof location !== 'string') return { res, url: target.url, redirects, close };
      try {
        await res.body.dump();
      } catch (err) {
        throw requestFailure(err, hop.signal);
      } finally {
        await close();
      }
      if (redirects >= this.maxRedirects) throw new OutboundRequestError(`more than ${this.maxRedirects} redirects`, 'too_many_redirects');
      try {
        current = new URL(location, target.url).href;
      } catch {
        throw new OutboundRequestError('redirect with an invalid Location', 'bad_redirect');
      }
      // As fetch does: 303 (and 301/302 after a POST) continue as a GET without the body.
      if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  }
}

interface Hop {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  param: string;
  /** Per-phase time limits (headers, then each gap in the body), for answers whose body is streamed. */
  bodyTimeoutMs?: number;
}

interface FinalAnswer {
  res: Dispatcher.ResponseData;
  url: URL;
  redirects: number;
  /** Closes the hop's pinned dispatcher. */
  close(): Promise<unknown>;
}

const tooLarge = (limit: number) => new OutboundRequestError(`the body is larger than ${limit} bytes`, 'too_large');

/** The answer's body, refused (`too_large`) when its declared length or what has arrived passes `limit`. */
function cappedBody(res: Dispatcher.ResponseData, limit: number): AsyncGenerator<Buffer> {
  return cappedChunks(res.body as AsyncIterable<Buffer>, res.headers['content-length'], limit, () => tooLarge(limit), () => res.body.destroy());
}

function contentTypeOf(res: Dispatcher.ResponseData): string | null {
  const type = res.headers['content-type'];
  return typeof type === 'string' ? type : null;
}

/** An undici failure as the client's own error: the time limit (the signal fired) or the connection. */
function requestFailure(err: unknown, signal: AbortSignal): Error {
  if (err instanceof OutboundRequestError) return err;
  const code = (err as { code?: unknown }).code;
  if (signal.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return new OutboundRequestError('timed out', 'timeout');
  return new OutboundRequestError(`connection failed: ${(err as Error).message}`, 'connection');
}

function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase())));
}

/** A `lookup` for the connection that answers the checked addresses, whatever name it is asked for. */
function pinnedLookup(target: CheckedTarget) {
  return (_hostname: string, options: LookupOptions, callback: LookupCallback) => {
    const wanted = options.family === 4 || options.family === 6 ? target.addresses.filter((a) => a.family === options.family) : target.addresses;
    if (wanted.length === 0) {
      callback(Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' }), []);
      return;
    }
    if (options.all) callback(null, wanted);
    else callback(null, wanted[0].address, wanted[0].family);
  };
}
