// The address-guard probes of the hostile-traffic drill: every internal address in the spellings an attacker
// uses to slip past a naive check, against every URL the gateway calls back or fetches.

/** Hosts that all lead inside: loopback in every IPv4 notation, mapped IPv6, the private and link-local ranges. */
export const INTERNAL_HOSTS: Record<string, string> = {
  'loopback decimal': '2130706433',
  'loopback octal': '0177.0.0.1',
  'loopback hex': '0x7f000001',
  'loopback hex dotted': '0x7f.0.0.1',
  'loopback short': '127.1',
  'loopback dotted': '127.0.0.1',
  'ipv4-mapped ipv6': '[::ffff:127.0.0.1]',
  'ipv4-mapped ipv6 hex': '[::ffff:7f00:1]',
  'ipv6 loopback': '[::1]',
  'ipv6 ula': '[fd00::1]',
  'ipv6 link-local': '[fe80::1]',
  'link-local metadata': '169.254.169.254',
  'private 10/8': '10.0.0.1',
  'private 172.16/12': '172.16.0.1',
  'private 192.168/16': '192.168.1.1',
  'cgnat 100.64/10': '100.64.0.1',
  'unspecified 0.0.0.0': '0.0.0.0',
  'name resolving to loopback': 'localhost',
};

/** Where the gateway takes a URL from a caller: the request that submits it and the param a refusal names. */
export interface UrlTarget {
  name: string;
  method: string;
  path: string;
  param: string;
  body: (url: string) => Record<string, unknown>;
}

/** The probe URL for a host: HTTPS (plain http is refused before any address is looked at). */
export const probeUrl = (host: string) => `https://${host}/drill-probe`;
