import { identityHeaders, readIdentity, type Identity } from './identity';

const HASH = 'ab'.repeat(32);

describe('readIdentity', () => {
  it.each<[string, Record<string, string | string[] | undefined>, Identity | null]>([
    ['no identity headers (the request skipped the edge)', {}, null],
    ['an account without a key hash', { 'x-gw-account-id': 'acct_1' }, null],
    ['a key hash without an account', { 'x-gw-key-hash': HASH }, null],
    ['an empty account', { 'x-gw-account-id': '', 'x-gw-key-hash': HASH }, null],
    ['an ordinary key without a limit', { 'x-gw-account-id': 'acct_1', 'x-gw-key-hash': HASH },
      { accountId: 'acct_1', keyHash: HASH, isManagement: false, keyLimitMicros: null, keyLimitReset: null }],
    ['a management key', { 'x-gw-account-id': 'acct_1', 'x-gw-key-hash': HASH, 'x-gw-key-management': 'true' },
      { accountId: 'acct_1', keyHash: HASH, isManagement: true, keyLimitMicros: null, keyLimitReset: null }],
    ['management only when exactly "true"', { 'x-gw-account-id': 'acct_1', 'x-gw-key-hash': HASH, 'x-gw-key-management': 'yes' },
      { accountId: 'acct_1', keyHash: HASH, isManagement: false, keyLimitMicros: null, keyLimitReset: null }],
    ['a limit with a monthly reset', { 'x-gw-account-id': 'acct_1', 'x-gw-key-hash': HASH, 'x-gw-key-limit-micros': '2500000', 'x-gw-key-limit-reset': 'monthly' },
      { accountId: 'acct_1', keyHash: HASH, isManagement: false, keyLimitMicros: 2_500_000, keyLimitReset: 'monthly' }],
    ['a zero limit is a limit', { 'x-gw-account-id': 'acct_1', 'x-gw-key-hash': HASH, 'x-gw-key-limit-micros': '0' },
      { accountId: 'acct_1', keyHash: HASH, isManagement: false, keyLimitMicros: 0, keyLimitReset: null }],
    ['an unknown reset is no reset', { 'x-gw-account-id': 'acct_1', 'x-gw-key-hash': HASH, 'x-gw-key-limit-micros': '5', 'x-gw-key-limit-reset': 'hourly' },
      { accountId: 'acct_1', keyHash: HASH, isManagement: false, keyLimitMicros: 5, keyLimitReset: null }],
    ['repeated headers: the first value', { 'x-gw-account-id': ['acct_1', 'acct_2'], 'x-gw-key-hash': [HASH, 'x'] },
      { accountId: 'acct_1', keyHash: HASH, isManagement: false, keyLimitMicros: null, keyLimitReset: null }],
  ])('%s', (_what, headers, expected) => {
    expect(readIdentity(headers)).toEqual(expected);
  });
});

describe('identityHeaders', () => {
  it.each<Identity>([
    { accountId: 'acct_1', keyHash: HASH, isManagement: true, keyLimitMicros: null, keyLimitReset: null },
    { accountId: 'acct_2', keyHash: HASH, isManagement: false, keyLimitMicros: 1_000_000, keyLimitReset: 'daily' },
    { accountId: 'acct_3', keyHash: HASH, isManagement: false, keyLimitMicros: 0, keyLimitReset: 'weekly' },
    { accountId: 'acct_4', keyHash: HASH, isManagement: false, keyLimitMicros: 7, keyLimitReset: null },
  ])('what the edge writes is what the services read: %o', (id) => {
    const headers = identityHeaders(id);
    for (const name of Object.keys(headers)) expect(name).toMatch(/^x-gw-/);
    expect(readIdentity(headers)).toEqual(id);
  });

  it('writes no limit headers for an unlimited key', () => {
    expect(Object.keys(identityHeaders({ accountId: 'a', keyHash: HASH, isManagement: false, keyLimitMicros: null, keyLimitReset: null })).sort())
      .toEqual(['x-gw-account-id', 'x-gw-key-hash', 'x-gw-key-management']);
  });
});
