import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { InputError } from '@gw/platform';
import { classifyAddress, describeRange, type AddressPolicyOptions } from './address-policy';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to (A and AAAA). Tests inject one; production asks the system resolver. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const found = await lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * The longest URL the gateway calls or keeps: over what common servers and proxies accept in a request line (8 KiB),
 * and far over any presigned storage link.
 */
export const MAX_OUTBOUND_URL_CHARS = 8192;

/** How outbound URLs are checked; production uses the defaults. */
export interface OutboundPolicy extends AddressPolicyOptions {
  /** Test-only: accept `http:` as well as `https:`. */
  allowHttp?: boolean;
  resolver?: HostResolver;
}

export interface CheckUrlOptions extends OutboundPolicy {
  /** The request parameter the URL came from, named in the 400 (`callback_url`, `url`, ...). */
  param: string;
}

/** A URL the gateway may call, with the checked addresses its connection must use (nothing else). */
export interface CheckedTarget {
  url: URL;
  addresses: ResolvedAddress[];
}

/** A URL the gateway refuses to call: a 400 naming the parameter it came from. */
export class OutboundUrlError extends InputError {
  constructor(message: string, param: string, code: 'invalid_url' | 'forbidden_address' | 'unresolvable_host') {
    super(message, param, code);
  }
}

/**
 * Checks a URL the gateway is asked to call back or fetch. The host is read by the WHATWG URL parser, which
 * turns every IPv4 spelling (decimal `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`, a
 * trailing dot) into the dotted quad and IPv6 literals into their canonical form; a name is resolved and
 * EVERY address it has must be public, so a name with one internal record is refused outright.
 */
export async function checkOutboundUrl(raw: string, opts: CheckUrlOptions): Promise<CheckedTarget> {
  const { param } = opts;
  if (raw.length > MAX_OUTBOUND_URL_CHARS) throw new OutboundUrlError(`${param} is longer than ${MAX_OUTBOUND_URL_CHARS} characters`, param, 'invalid_url');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundUrlError(`${param} is not a valid absolute URL`, param, 'invalid_url');
  }
  if (url.protocol !== 'https:' && !(opts.allowHttp && url.protocol === 'http:')) {
    throw new OutboundUrlError(`${param} must use https`, param, 'invalid_url');
  }
  // Credentials in the URL would travel to whoever the host is; and `user@host` spellings only confuse readers.
  if (url.username !== '' || url.password !== '') {
    throw new OutboundUrlError(`${param} must not contain credentials`, param, 'invalid_url');
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') throw new OutboundUrlError(`${param} has no host`, param, 'invalid_url');

  const addresses = isIP(host) ? [{ address: host, family: isIP(host) as 4 | 6 }] : await resolve(host, opts);
  for (const a of addresses) {
    const verdict = classifyAddress(a.address, opts);
    if (!verdict.allowed) {
      throw new OutboundUrlError(`${param} points to ${describeRange(verdict.range)} address, which the gateway does not call`, param, 'forbidden_address');
    }
  }
  return { url, addresses };
}

async function resolve(host: string, opts: CheckUrlOptions): Promise<ResolvedAddress[]> {
  let found: ResolvedAddress[];
  try {
    found = await (opts.resolver ?? systemResolver)(host);
  } catch {
    found = [];
  }
  if (found.length === 0) throw new OutboundUrlError(`${opts.param} has a host name that does not resolve`, opts.param, 'unresolvable_host');
  return found;
}
