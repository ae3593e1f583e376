import { AuthenticationError, ConflictError, NotFoundError, PermissionError, UnavailableError } from '@gw/platform';
import { hashSecret } from './key-secret';
import { KeyStore, type KeyDoc } from './key-store';
import { BillingKeyUsage } from './key-usage';
import { KeysService, type Caller, type CreateKeyInput, type Manager } from './keys-service';
import {
  deadAddress, openEngines, startBillingStub, tempDir, testClock, testLogger, testSigner, watchKeyChanges, type BillingStub, type TestEngines,
} from './test-support';

const ADMIN_SECRET = 'sk-gw-v1-test-admin-secret-acct-a';
const OTHER_ADMIN_SECRET = 'sk-gw-v1-test-admin-secret-acct-b';
const logger = testLogger();
const plain = (name: string, extra: Partial<CreateKeyInput> = {}): CreateKeyInput =>
  ({ name, limit_micros: null, limit_reset: null, expires_at: null, ...extra });

describe('KeysService', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let engines: TestEngines;
  let billing: BillingStub;
  let usage: BillingKeyUsage;
  let clock: ReturnType<typeof testClock>;
  let announced: string[];
  let service: KeysService;
  let admin: Manager;
  let otherAdmin: Manager;

  function serviceWith(usageSource = usage): KeysService {
    return new KeysService({ keys: KeyStore.over(engines.store), usage: usageSource, bus: engines.bus, logger, announce: (l) => { announced.push(l); }, now: clock.now });
  }

  beforeEach(async () => {
    dir = await tempDir();
    engines = await openEngines(dir.path, logger);
    billing = await startBillingStub();
    usage = new BillingKeyUsage(billing.address, testSigner('keys'));
    clock = testClock();
    announced = [];
    service = serviceWith();
    await KeyStore.over(engines.store).ensureIndexes();
    await service.ensureBootstrapKeys([{ id: 'acct_a', management_key: ADMIN_SECRET }, { id: 'acct_b', management_key: OTHER_ADMIN_SECRET }]);
    admin = await service.asManager({ accountId: 'acct_a', keyHash: hashSecret(ADMIN_SECRET) });
    otherAdmin = await service.asManager({ accountId: 'acct_b', keyHash: hashSecret(OTHER_ADMIN_SECRET) });
  });

  afterEach(async () => {
    usage.close();
    await billing.stop();
    await engines.close();
    await dir.remove();
  });

  it('returns the secret once and stores only its hash', async () => {
    const { key, secret } = await service.create(admin, plain('ci', { limit_micros: 5_000_000, limit_reset: 'daily' }));
    expect(secret).toMatch(/^sk-gw-v1-[0-9a-f]{48}$/);
    expect(key.hash).toBe(hashSecret(secret));
    expect(key.label).toBe(`${secret.slice(0, 12)}...${secret.slice(-2)}`);
    expect(key).toMatchObject({ name: 'ci', disabled: false, limit: 5, limit_remaining: 5, limit_reset: 'daily', usage: 0 });

    const raw = await engines.store.collection<KeyDoc>('keys').findOne({ _id: key.hash });
    expect(raw).toMatchObject({ account_id: 'acct_a', is_management: false, limit_micros: 5_000_000 });
    expect(JSON.stringify(raw)).not.toContain(secret.slice(9));
    const [listed] = (await service.list(admin, { offset: 0, includeDisabled: false })).filter((k) => k.hash === key.hash);
    expect(JSON.stringify(listed)).not.toContain(secret.slice(9));
  });

  it('authenticates a known key and refuses unknown, disabled and expired ones with different messages', async () => {
    const { key, secret } = await service.create(admin, plain('k', { expires_at: new Date(clock.now().getTime() + 60_000).toISOString() }));
    expect(await service.authenticate(secret)).toMatchObject({ _id: key.hash, account_id: 'acct_a', is_management: false });

    const failures: string[] = [];
    const refuse = async (secretToTry: string) => {
      const err = await service.authenticate(secretToTry).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuthenticationError);
      expect((err as AuthenticationError).status).toBe(401);
      failures.push((err as Error).message);
    };
    await refuse('sk-gw-v1-unknown');
    await refuse('');
    await service.update(admin, key.hash, { disabled: true });
    await refuse(secret);
    await service.update(admin, key.hash, { disabled: false });
    clock.advance(60_000);
    await refuse(secret);
    expect(new Set(failures).size).toBe(4);
  });

  it('lists an account\'s keys with offset and include_disabled', async () => {
    const made = [];
    for (const name of ['k1', 'k2', 'k3']) {
      clock.advance(1000);
      made.push((await service.create(admin, plain(name))).key);
    }
    await service.create(otherAdmin, plain('not mine'));
    await service.update(admin, made[1].hash, { disabled: true });

    const names = async (q: { offset: number; includeDisabled: boolean }) => (await service.list(admin, q)).map((k) => k.name);
    expect(await names({ offset: 0, includeDisabled: false })).toEqual(['Bootstrap management key', 'k1', 'k3']);
    expect(await names({ offset: 0, includeDisabled: true })).toEqual(['Bootstrap management key', 'k1', 'k2', 'k3']);
    expect(await names({ offset: 2, includeDisabled: true })).toEqual(['k2', 'k3']);
    expect(await names({ offset: 10, includeDisabled: true })).toEqual([]);
  });

  it('fills usage from billing and computes limit_remaining per reset period', async () => {
    const monthly = (await service.create(admin, plain('m', { limit_micros: 10_000_000, limit_reset: 'monthly' }))).key;
    const forever = (await service.create(admin, plain('f', { limit_micros: 10_000_000 }))).key;
    const unlimited = (await service.create(admin, plain('u'))).key;
    const spent = { total: 9_500_000, daily: 500_000, weekly: 1_500_000, monthly: 4_000_001 };
    for (const k of [monthly, forever, unlimited]) billing.usage.set(k.hash, spent);

    const byName = new Map((await service.list(admin, { offset: 0, includeDisabled: false })).map((k) => [k.name, k]));
    expect(byName.get('m')).toMatchObject({ usage: 9.5, usage_daily: 0.5, usage_weekly: 1.5, usage_monthly: 4.000001, limit: 10, limit_remaining: 5.999999 });
    expect(byName.get('f')).toMatchObject({ limit: 10, limit_remaining: 0.5 });
    expect(byName.get('u')).toMatchObject({ limit: null, limit_remaining: null, usage: 9.5 });

    const updated = await service.update(admin, forever.hash, { limit_micros: 9_000_000 });
    expect(updated).toMatchObject({ limit: 9, limit_remaining: 0 });
  });

  it('publishes KeyChanged keyed by hash on update and delete', async () => {
    const watch = await watchKeyChanges(engines.bus);
    const { key } = await service.create(admin, plain('k'));
    await service.update(admin, key.hash, { name: 'renamed' });
    await service.delete(admin, key.hash);
    expect(await watch.waitFor(2)).toEqual([{ key_hash: key.hash, change: 'updated' }, { key_hash: key.hash, change: 'deleted' }]);
    expect(watch.keys).toEqual([key.hash, key.hash]);
    await watch.stop();
  });

  it('answers 404 for unknown keys and keys of another account, and leaves the other account\'s key alone', async () => {
    const theirs = (await service.create(otherAdmin, plain('theirs'))).key;
    for (const hash of [hashSecret('nobody'), theirs.hash]) {
      await expect(service.update(admin, hash, { disabled: true })).rejects.toBeInstanceOf(NotFoundError);
      await expect(service.delete(admin, hash)).rejects.toBeInstanceOf(NotFoundError);
    }
    expect((await service.list(otherAdmin, { offset: 0, includeDisabled: false })).map((k) => k.name)).toContain('theirs');
  });

  it('lets only active management keys manage, and no key disable or delete itself', async () => {
    const { key } = await service.create(admin, plain('ordinary'));
    const ordinary: Caller = { accountId: 'acct_a', keyHash: key.hash };
    await expect(service.asManager(ordinary)).rejects.toBeInstanceOf(PermissionError);
    expect((await service.currentKey(ordinary)).isManagement).toBe(false);
    await expect(service.asManager({ accountId: 'acct_b', keyHash: key.hash })).rejects.toBeInstanceOf(AuthenticationError);
    await expect(service.update(admin, admin.keyHash, { disabled: true })).rejects.toBeInstanceOf(ConflictError);
    await expect(service.delete(admin, admin.keyHash)).rejects.toBeInstanceOf(ConflictError);
  });

  it('fails with 503 and writes nothing when billing is unreachable', async () => {
    const { key } = await service.create(admin, plain('k'));
    const down = new BillingKeyUsage(await deadAddress(), testSigner('keys'), 500);
    const blind = serviceWith(down);
    try {
      await expect(blind.list(admin, { offset: 0, includeDisabled: false })).rejects.toBeInstanceOf(UnavailableError);
      const err = await blind.update(admin, key.hash, { name: 'changed' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      expect((err as UnavailableError).status).toBe(503);
      expect((await engines.store.collection<KeyDoc>('keys').findOne({ _id: key.hash }))?.name).toBe('k');
    } finally {
      down.close();
    }
  });

  it('creates bootstrap keys once: a random secret is announced, a configured one is not', async () => {
    expect(announced).toEqual([]);
    await service.ensureBootstrapKeys([{ id: 'acct_a', management_key: ADMIN_SECRET }, { id: 'acct_c' }]);
    expect(announced).toHaveLength(1);
    const secret = /: (sk-gw-v1-[0-9a-f]{48})$/.exec(announced[0])?.[1];
    expect(secret).toBeDefined();
    expect(await service.authenticate(secret!)).toMatchObject({ account_id: 'acct_c', is_management: true });

    // Same data dir after a restart: nothing new is made or printed.
    await engines.close();
    engines = await openEngines(dir.path, logger);
    service = serviceWith();
    await service.ensureBootstrapKeys([{ id: 'acct_a', management_key: ADMIN_SECRET }, { id: 'acct_c' }]);
    expect(announced).toHaveLength(1);
    expect(await engines.store.collection<KeyDoc>('keys').count({ is_management: true })).toBe(3);
  });

  it('refuses a seed secret that already belongs to another account', async () => {
    await expect(service.ensureBootstrapKeys([{ id: 'acct_new', management_key: ADMIN_SECRET }])).rejects.toThrow(/acct_new/);
  });
});
