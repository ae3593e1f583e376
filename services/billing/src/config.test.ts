import { existsSync } from 'node:fs';
import { loadBillingConfig } from './config';

const SECRET = { GATEWAY_IDENTITY_SECRET: 'billing-config-test-secret-0123456789abcdef' };

describe('billing config', () => {
  test('defaults: ports on loopback, the repository catalogue, one local account with 100 USD credit', () => {
    const config = loadBillingConfig(SECRET);
    expect(config).toMatchObject({
      BILLING_HTTP_PORT: 8082, BILLING_GRPC_PORT: 9082, BIND_HOST: '127.0.0.1', USAGE_BATCH_MAX: 500, USAGE_BATCH_WAIT_MS: 50, STORE: 'embedded', BUS: 'embedded', SPEND_OVERDRAFT_ALLOWANCE_USD: 1_000,
    });
    expect(existsSync(config.CATALOG_FILE)).toBe(true);
    expect(config.SEED_ACCOUNTS).toEqual([{ id: 'acct_local', walletMicros: 0, creditMicros: 100_000_000, priceFactorPpm: 1_000_000 }]);
  });

  test('seed accounts with wallet, credit and an enterprise factor', () => {
    const config = loadBillingConfig({ ...SECRET, SEED_ACCOUNTS: '[{"id":"acct_ent","wallet_usd":"12.5","credit_usd":0,"price_factor":"0.8"}]' });
    expect(config.SEED_ACCOUNTS).toEqual([{ id: 'acct_ent', walletMicros: 12_500_000, creditMicros: 0, priceFactorPpm: 800_000 }]);
  });

  test.each([
    ['SEED_ACCOUNTS', 'not json'],
    ['SEED_ACCOUNTS', '[{"id":"a","price_factor":"0.1234567"}]'],
    ['SEED_ACCOUNTS', '[{"id":"a","wallet_usd":"-1"}]'],
    ['SEED_ACCOUNTS', '[{"wallet_usd":"1"}]'],
    ['USAGE_BATCH_MAX', '0'],
    ['USAGE_BATCH_WAIT_MS', '-1'],
    ['USAGE_BATCH_WAIT_MS', '5001'],
    ['SPEND_OVERDRAFT_ALLOWANCE_USD', '-0.001'],
    ['SPEND_OVERDRAFT_ALLOWANCE_USD', '0.0000001'],
    ['BILLING_HTTP_PORT', 'eighty'],
    ['GATEWAY_IDENTITY_SECRET', 'too short to key an HMAC'],
  ])('%s=%s is refused with the variable named', (name, value) => {
    expect(() => loadBillingConfig({ ...SECRET, [name]: value })).toThrow(name);
  });

  test('without the identity secret billing refuses to start', () => {
    expect(() => loadBillingConfig({})).toThrow('GATEWAY_IDENTITY_SECRET');
  });
});
