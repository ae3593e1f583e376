import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses the gateway may connect to on a caller's behalf: public unicast only. ipaddr.js names
 * the special-purpose ranges (private, loopback, link-local, CGNAT, multicast, unspecified, broadcast,
 * benchmarking, documentation, reserved, IPv4-mapped, NAT64, 6to4, Teredo, ULA, ...); anything it does not
 * call `unicast` is refused. The IPv4-compatible block (::/96), which it files under unicast, is refused too:
 * like IPv4-mapped addresses it can smuggle an internal IPv4 address into an IPv6 literal.
 */

/** What a check refuses, and why; null when the address is allowed. */
export type AddressVerdict = { allowed: true } | { allowed: false; range: string };

const IPV4_COMPATIBLE: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('::'), 96];

export interface AddressPolicyOptions {
  /** Test-only: admit the loopback ranges (127.0.0.0/8, ::1) so a test can call a receiver on this machine. */
  allowLoopback?: boolean;
}

/** The range an address literal (any notation ipaddr.js parses) falls in, as ipaddr.js names it. */
export function addressRange(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).match(IPV4_COMPATIBLE) && parsed.range() === 'unicast') return 'ipv4Compatible';
  return parsed.range();
}

/** What a refused range is called in an error message: ipaddr.js's names are identifiers, not prose. */
const RANGE_DESCRIPTIONS: Record<string, string> = {
  loopback: 'a loopback', private: 'a private', linkLocal: 'a link-local', uniqueLocal: 'a unique local (fc00::/7)',
  carrierGradeNat: 'a carrier-grade NAT (100.64.0.0/10)', unspecified: 'an unspecified', broadcast: 'a broadcast',
  multicast: 'a multicast', reserved: 'a reserved', benchmarking: 'a benchmarking', ipv4Mapped: 'an IPv4-mapped IPv6',
  ipv4Compatible: 'an IPv4-compatible IPv6', rfc6052: 'a NAT64 (64:ff9b::/96)', rfc6145: 'an IPv4-translated (RFC 6145)',
  '6to4': 'a 6to4 (2002::/16)', teredo: 'a Teredo (2001::/32)', deprecatedSiteLocal: 'a site-local (fec0::/10)',
  discard: 'a discard-only (100::/64)', as112: 'an AS112', as112v6: 'an AS112', amt: 'an AMT relay',
};

/** `range` as an error message says it, article included: "a link-local", "an IPv4-mapped IPv6". */
export function describeRange(range: string): string {
  return RANGE_DESCRIPTIONS[range] ?? `a special-purpose (${range})`;
}

/** Whether the gateway may connect to `address` (an IP literal, no brackets). Unparseable input is refused. */
export function classifyAddress(address: string, opts: AddressPolicyOptions = {}): AddressVerdict {
  if (!ipaddr.isValid(address)) return { allowed: false, range: 'invalid' };
  const range = addressRange(address);
  if (range === 'unicast') return { allowed: true };
  if (range === 'loopback' && opts.allowLoopback) return { allowed: true };
  return { allowed: false, range };
}
