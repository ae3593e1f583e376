import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@gw/platform';
import { startKeysService } from './app';
import { writeToOwnerOnlyFile } from './bootstrap-key-file';
import { bootstrapKeyFile, keysConfigSchema } from './config';
import { openEngines, startBillingStub, tempDir, type BillingStub } from './test-support';

/** Every line a logger wrote, as text, to search for what must never be there. */
function capturingLogger(): { logger: Logger; text: () => string } {
  const raw: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { raw.push(chunk.toString()); done(); } });
  return { logger: createLogger('keys', 'trace', sink), text: () => raw.join('') };
}

const SECRET_LINE = /: (sk-gw-v1-[0-9a-f]{48})$/m;

describe('bootstrap management keys of a standalone keys service', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let billing: BillingStub;

  beforeAll(async () => {
    dir = await tempDir();
    billing = await startBillingStub();
  });
  afterAll(async () => {
    await billing.stop();
    await dir.remove();
  });

  it('defaults the file beside the data, and BOOTSTRAP_KEY_FILE moves it', () => {
    expect(bootstrapKeyFile({ DATA_DIR: '/var/lib/gw', BOOTSTRAP_KEY_FILE: undefined })).toBe('/var/lib/gw/keys/bootstrap-management-keys.txt');
    expect(bootstrapKeyFile({ DATA_DIR: '/var/lib/gw', BOOTSTRAP_KEY_FILE: '/secrets/keys.txt' })).toBe('/secrets/keys.txt');
  });

  it('puts a generated secret only in an owner-only file, and logs the path and the masked label', async () => {
    const file = join(dir.path, 'data', 'keys', 'bootstrap-management-keys.txt');
    const logs = capturingLogger();
    const engines = await openEngines(join(dir.path, 'store'), logs.logger);
    // From the environment, as main.ts reads it (an identity secret where the platform asks for one).
    const config = keysConfigSchema.parse({
      KEYS_HTTP_PORT: '0', KEYS_GRPC_PORT: '0', BILLING_GRPC_ADDR: billing.address, SEED_ACCOUNTS: '[{"id":"acct_generated"}]',
      GATEWAY_IDENTITY_SECRET: 'bootstrap-key-file-test-identity-secret-0123456789',
    });
    const svc = await startKeysService({
      config, store: engines.store, bus: engines.bus, logger: logs.logger, announce: writeToOwnerOnlyFile(file, logs.logger),
    });
    try {
      const secret = SECRET_LINE.exec(await readFile(file, 'utf8'))?.[1];
      expect(secret).toBeDefined();
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir.path, 'data', 'keys'))).mode & 0o777).toBe(0o700);

      const logged = logs.text();
      expect(logged).not.toContain(secret);
      expect(logged).toContain(file);
      expect(logged).toContain(`"label":"${secret!.slice(0, 12)}`);
    } finally {
      await svc.stop();
      await engines.close();
    }
  });

  it('narrows a file that already existed with a wider mode before appending', async () => {
    const file = join(dir.path, 'preexisting', 'keys.txt');
    await mkdir(join(dir.path, 'preexisting'));
    await writeFile(file, 'earlier line\n', { mode: 0o644 });
    await writeToOwnerOnlyFile(file, capturingLogger().logger)('[keys] Management key for account a (shown once, store it now): sk-gw-v1-x');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toBe('earlier line\n[keys] Management key for account a (shown once, store it now): sk-gw-v1-x\n');
  });
});
