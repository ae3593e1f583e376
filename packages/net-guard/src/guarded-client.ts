import type { LookupAddress, LookupOptions } from 'node:dns';
import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
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
    let method = req.method;
    let body = req.body;
    let current = url;
    for (let redirects = 0; ; redirects++) {
      const target = await checkOutboundUrl(current, { ...this.opts, param: req.param });
      const { status, location } = await this.hop(target, method, req.headers, body, signal);
      if (!REDIRECTS.has(status) || location === null) return { status, url: target.url.href, redirects };
      if (redirects >= this.maxRedirects) throw new OutboundRequestError(`more than ${this.maxRedirects} redirects`, 'too_many_redirects');
      try {
        current = new URL(location, target.url).href;
      } catch {
        throw new OutboundRequestError('redirect with an invalid Location', 'bad_redirect');
      }
      // As fetch does: 303 (and 301/302 after a POST) continue as a GET without the body.
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  }

  /**
   * GETs a URL a caller gave (media to fetch) and reads its body: every hop checked like `send`'s, and a body
   * past `maxBytes` (declared or streamed) refused with `OutboundRequestError` kind `too_large`, unread.
   */
  async fetch(url: string, req: { timeoutMs: number; param: string; maxBytes: number; signal?: AbortSignal; headers?: Record<string, string> }): Promise<FetchedBody> {
    const signal = req.signal ? AbortSignal.any([req.signal, AbortSignal.timeout(req.timeoutMs)]) : AbortSignal.timeout(req.timeoutMs);
    let current = url;
    for (let redirects = 0; ; redirects++) {
      const target = await checkOutboundUrl(current, { ...this.opts, param: req.param });
      const answer = await this.hop(target, 'GET', req.headers ?? {}, undefined, signal, req.maxBytes);
      if (!REDIRECTS.has(answer.status) || answer.location === null) {
        return { status: answer.status, url: target.url.href, contentType: answer.contentType, body: answer.body ?? Buffer.alloc(0) };
      }
      if (redirects >= this.maxRedirects) throw new OutboundRequestError(`more than ${this.maxRedirects} redirects`, 'too_many_redirects');
      try {
        current = new URL(answer.location, target.url).href;
      } catch {
        throw new OutboundRequestError('redirect with an invalid Location', 'bad_redirect');
      }
    }
  }

  /** One request to a checked target; with `readLimit` the final answer's body is read (capped), else drained. */
  private async hop(target: CheckedTarget, method: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal, readLimit?: number) {
    const dispatcher = new Agent({ connect: { lookup: pinnedLookup(target), ...(this.ca ? { ca: this.ca } : {}) } });
    try {
      const res = await request(target.url, {
        method, body, signal, dispatcher,
        headers: method === 'GET' ? withoutBodyHeaders(headers) : headers,
      });
      const location = res.headers.location;
      const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : null;
      const redirect = REDIRECTS.has(res.statusCode) && typeof location === 'string';
      if (readLimit === undefined || redirect) {
        // The answer's body is not used: read it away so the connection ends cleanly.
        await res.body.dump();
        return { status: res.statusCode, location: typeof location === 'string' ? location : null, contentType, body: null };
      }
      // Abandoning a body aborts it with an error of its own: nobody is left to hear it.
      res.body.on('error', () => undefined);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > readLimit) {
        res.body.destroy();
        throw new OutboundRequestError(`the body is larger than ${readLimit} bytes`, 'too_large');
      }
      const parts: Buffer[] = [];
      let size = 0;
      for await (const part of res.body) {
        size += (part as Buffer).length;
        if (size > readLimit) {
          res.body.destroy();
          throw new OutboundRequestError(`the body is larger than ${readLimit} bytes`, 'too_large');
        }
        parts.push(part as Buffer);
      }
      return { status: res.statusCode, location: null, contentType, body: Buffer.concat(parts) };
    } catch (err) {
      if (err instanceof OutboundRequestError) throw err;
      if (signal.aborted) throw new OutboundRequestError('timed out', 'timeout');
      throw new OutboundRequestError(`connection failed: ${(err as Error).message}`, 'connection');
    } finally {
      await dispatcher.close().catch(() => undefined);
    }
  }
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
