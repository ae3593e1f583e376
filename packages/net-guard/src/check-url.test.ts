import { InputError } from '@gw/platform';
import { classifyAddress } from './address-policy';
import { checkOutboundUrl, OutboundUrlError, type HostResolver } from './check-url';

/** Names the tests resolve without DNS: each maps to the records a hostile (or honest) zone would serve. */
const zone: Record<string, string[]> = {
  'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'rebind.example': ['127.0.0.1'],
  'mixed.example': ['93.184.215.14', '10.0.0.7'],
  'metadata.example': ['169.254.169.254'],
  'v6-loopback.example': ['::1'],
  'mapped.example': ['::ffff:10.1.2.3'],
  'localhost.': ['127.0.0.1'],
};
const resolver: HostResolver = async (name) => (zone[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

const check = (url: string, extra: { allowLoopback?: boolean; allowHttp?: boolean } = {}) =>
  checkOutboundUrl(url, { param: 'callback_url', resolver, ...extra });

describe('checkOutboundUrl refuses every internal address form with a 400 naming the param', () => {
  it.each([
    // IPv4 loopback in every spelling the URL parser accepts
    ['https://127.0.0.1/hook', 'a loopback'],
    ['https://2130706433/hook', 'a loopback'],
    ['https://0177.0.0.1/hook', 'a loopback'],
    ['https://0x7f.1/hook', 'a loopback'],
    ['https://0x7f000001/hook', 'a loopback'],
    ['https://127.1/hook', 'a loopback'],
    ['https://127.0.0.1./hook', 'a loopback'],
    ['https://017700000001/hook', 'a loopback'],
    ['https://%31%32%37.0.0.1/hook', 'a loopback'],
    ['https://127.0.0.1:443@public.example/', null],
    // private, link-local (cloud metadata), CGNAT, unspecified, broadcast, multicast
    ['https://10.0.0.1/', 'a private'],
    ['https://172.16.5.4/', 'a private'],
    ['https://192.168.1.1/', 'a private'],
    ['https://0xa9.0xfe.0xa9.0xfe/', 'a link-local'],
    ['https://169.254.169.254/latest/meta-data', 'a link-local'],
    ['https://100.64.0.1/', 'a carrier-grade NAT (100.64.0.0/10)'],
    ['https://0.0.0.0/', 'an unspecified'],
    ['https://0/', 'an unspecified'],
    ['https://255.255.255.255/', 'a broadcast'],
    ['https://224.0.0.1/', 'a multicast'],
    // benchmarking, documentation, reserved
    ['https://198.18.0.1/', 'a reserved'],
    ['https://192.0.2.10/', 'a reserved'],
    ['https://203.0.113.9/', 'a reserved'],
    ['https://240.0.0.1/', 'a reserved'],
    // IPv6 literals
    ['https://[::1]/', 'a loopback'],
    ['https://[0:0:0:0:0:0:0:1]/', 'a loopback'],
    ['https://[::]/', 'an unspecified'],
    ['https://[fe80::1]/', 'a link-local'],
    ['https://[fc00::1]/', 'a unique local (fc00::/7)'],
    ['https://[fd12:3456::1]/', 'a unique local (fc00::/7)'],
    ['https://[ff02::1]/', 'a multicast'],
    ['https://[::ffff:127.0.0.1]/', 'an IPv4-mapped IPv6'],
    ['https://[::ffff:7f00:1]/', 'an IPv4-mapped IPv6'],
    ['https://[::ffff:169.254.169.254]/', 'an IPv4-mapped IPv6'],
    ['https://[::127.0.0.1]/', 'an IPv4-compatible IPv6'],
    ['https://[64:ff9b::7f00:1]/', 'a NAT64 (64:ff9b::/96)'],
    ['https://[2002:7f00:1::]/', 'a 6to4 (2002::/16)'],
    ['https://[2001:db8::1]/', 'a reserved'],
    ['https://[2001:2::1]/', 'a benchmarking'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'a Teredo (2001::/32)'],
    // names: resolved, and every address must be public
    ['https://rebind.example/hook', 'a loopback'],
    ['https://mixed.example/hook', 'a private'],
    ['https://metadata.example/', 'a link-local'],
    ['https://v6-loopback.example/', 'a loopback'],
    ['https://mapped.example/', 'an IPv4-mapped IPv6'],
    ['https://localhost./hook', 'a loopback'],
    ['https://LOCALHOST./hook', 'a loopback'],
    // userinfo tricks do not hide the real host (and credentials are refused anyway)
    ['https://public.example@127.0.0.1/', null],
    ['https://user:pass@public.example/', null],
  ])('%s', async (url, range) => {
    const err = await check(url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundUrlError);
    expect(err).toBeInstanceOf(InputError);
    expect((err as OutboundUrlError).status).toBe(400);
    expect((err as OutboundUrlError).param).toBe('callback_url');
    if (range) expect((err as Error).message).toBe(`callback_url points to ${range} address, which the gateway does not call`);
  });

  it.each([
    ['http://public.example/hook', 'must use https'],
    ['ftp://public.example/', 'must use https'],
    ['file:///etc/passwd', 'must use https'],
    ['not a url', 'not a valid absolute URL'],
    ['/relative/path', 'not a valid absolute URL'],
    ['https://nowhere.example/', 'does not resolve'],
  ])('%s is refused (%s)', async (url, message) => {
    await expect(check(url)).rejects.toMatchObject({ status: 400, param: 'callback_url', message: expect.stringContaining(message) });
  });
});

describe('checkOutboundUrl admits public targets and returns the addresses to connect to', () => {
  it('a public name: every resolved address, to be pinned', async () => {
    const target = await check('https://public.example/hook?x=1');
    expect(target.url.href).toBe('https://public.example/hook?x=1');
    expect(target.addresses.map((a) => a.address)).toEqual(zone['public.example']);
  });

  it('a URL of 8192 characters, and not one character more', async () => {
    const url = `https://public.example/${'x'.repeat(8192 - 'https://public.example/'.length)}`;
    await expect(check(url)).resolves.toMatchObject({ url: { href: url } });
    await expect(check(`${url}x`)).rejects.toMatchObject({ status: 400, param: 'callback_url', message: expect.stringContaining('longer than 8192 characters') });
  });

  it('public IPv4 and IPv6 literals, no resolution needed', async () => {
    await expect(check('https://8.8.8.8/')).resolves.toMatchObject({ addresses: [{ address: '8.8.8.8', family: 4 }] });
    await expect(check('https://[2606:4700:4700::1111]:8443/')).resolves.toMatchObject({ addresses: [{ address: '2606:4700:4700::1111', family: 6 }] });
  });

  it('the test-only switches admit loopback and http, and nothing else internal', async () => {
    await expect(check('https://127.0.0.1:9/', { allowLoopback: true })).resolves.toBeDefined();
    await expect(check('https://[::1]:9/', { allowLoopback: true })).resolves.toBeDefined();
    await expect(check('https://rebind.example/', { allowLoopback: true })).resolves.toBeDefined();
    await expect(check('http://public.example/', { allowHttp: true })).resolves.toBeDefined();
    await expect(check('https://10.0.0.1/', { allowLoopback: true })).rejects.toBeInstanceOf(OutboundUrlError);
    await expect(check('https://[::ffff:127.0.0.1]/', { allowLoopback: true })).rejects.toBeInstanceOf(OutboundUrlError);
  });
});

describe('classifyAddress', () => {
  it.each([
    ['93.184.215.14', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['::ffff:8.8.8.8', false],
    ['not-an-ip', false],
  ])('%s allowed: %s', (address, allowed) => {
    expect(classifyAddress(address).allowed).toBe(allowed);
  });
});
