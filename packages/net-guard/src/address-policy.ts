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

/** Whether the gateway may connect to `address` (an IP literal, no brackets). Unparseable input is refused. */
export function classifyAddress(address: string, opts: AddressPolicyOptions = {}): AddressVerdict {
  if (!ipaddr.isValid(address)) return { allowed: false, range: 'invalid' };
  const range = addressRange(address);
  if (range === 'unicast') return { allowed: true };
  if (range === 'loopback' && opts.allowLoopback) return { allowed: true };
  return { allowed: false, range };
}
