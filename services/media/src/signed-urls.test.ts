import { SignedUrls } from './signed-urls';

const SECRET = 'a-platform-secret-of-at-least-32-bytes!!';

describe('SignedUrls', () => {
  let now = 1_700_000_000_000;
  const urls = new SignedUrls(SECRET, 'https://gw.example/', 60, () => now);
  const tokenOf = (url: string) => url.split('/').at(-1)!;

  it('a signed link names its blob, type and download name on the public address until it expires', () => {
    const { url, expiresIn } = urls.sign({ blobKey: 'media/images/acct_1/img_1', contentType: 'image/png', filename: 'img_1.png' });
    expect(url.startsWith('https://gw.example/v1/media/signed/')).toBe(true);
    expect(expiresIn).toBe(60);
    expect(urls.verify(tokenOf(url))).toEqual({ blobKey: 'media/images/acct_1/img_1', contentType: 'image/png', filename: 'img_1.png' });
    now += 61_000;
    expect(() => urls.verify(tokenOf(url))).toThrow(expect.objectContaining({ status: 403, code: 'link_expired' }));
  });

  it('a changed claim, a foreign key or garbage is refused', () => {
    const token = tokenOf(urls.sign({ blobKey: 'media/images/acct_1/img_1', contentType: 'image/png' }).url);
    const [body, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), k: 'media/images/acct_2/img_9' })).toString('base64url');
    expect(() => urls.verify(`${forged}.${mac}`)).toThrow(expect.objectContaining({ status: 403, code: 'invalid_signature' }));
    const other = new SignedUrls('another-secret-of-at-least-32-bytes-long', 'https://gw.example', 60, () => now);
    expect(() => other.verify(token)).toThrow(expect.objectContaining({ status: 403 }));
    expect(() => urls.verify('nodot')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => urls.verify('a.b.c')).toThrow(expect.objectContaining({ status: 404 }));
  });
});
