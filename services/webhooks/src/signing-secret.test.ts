import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWebhooksConfig } from './config';
import { readOrCreateSecretsKey } from './secrets-key-file';
import { newSigningSecret, SecretBox } from './signing-secret';

const KEY = 'k'.repeat(32);

describe('signing secrets at rest', () => {
  it('are whsec_ + base64 of 24 random bytes, different each time', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24);
    expect(newSigningSecret()).not.toBe(a);
  });

  it('are sealed (nothing of the secret in the stored text) and open only under the same key', () => {
    const secret = newSigningSecret();
    const sealed = new SecretBox(KEY).seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(new SecretBox(KEY).open(sealed)).toBe(secret);
    expect(new SecretBox(`${KEY}-other`).open(sealed)).toBeNull();
    expect(new SecretBox(KEY).open(`${sealed.slice(0, -2)}AA`)).toBeNull();
    expect(new SecretBox(KEY).open('not sealed')).toBeNull();
  });

  it('the single-process key file is made once, owner-only, and read back on the next start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-webhooks-key-'));
    try {
      const file = join(dir, 'nested', 'webhooks-secrets.key');
      const first = readOrCreateSecretsKey(file);
      expect(Buffer.byteLength(first)).toBeGreaterThanOrEqual(32);
      expect(readOrCreateSecretsKey(file)).toBe(first);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('webhooks config', () => {
  const base = { GATEWAY_IDENTITY_SECRET: 'i'.repeat(32) };

  it('refuses loopback callbacks unless the test-only switch is set, and short secrets keys', () => {
    expect(loadWebhooksConfig(base)).toMatchObject({ GATEWAY_ALLOW_LOOPBACK_CALLBACKS: false, WEBHOOKS_HTTP_PORT: 8086 });
    expect(loadWebhooksConfig({ ...base, GATEWAY_ALLOW_LOOPBACK_CALLBACKS: 'true' }).GATEWAY_ALLOW_LOOPBACK_CALLBACKS).toBe(true);
    expect(() => loadWebhooksConfig({ ...base, WEBHOOK_SECRETS_KEY: 'short' })).toThrow(/WEBHOOK_SECRETS_KEY/);
    expect(() => loadWebhooksConfig({})).toThrow(/GATEWAY_IDENTITY_SECRET/);
  });
});
