import type { Collection, Doc, Filter, Store } from '@gw/store';

export type LimitReset = 'daily' | 'weekly' | 'monthly';
export const LIMIT_RESETS: readonly LimitReset[] = ['daily', 'weekly', 'monthly'];

/** One API key. `_id` is the hex SHA-256 of the secret; the secret itself is never stored. */
export interface KeyDoc extends Doc {
  account_id: string;
  name: string;
  /** Masked secret, e.g. `sk-gw-v1-ab1...f9`. */
  label: string;
  disabled: boolean;
  is_management: boolean;
  limit_micros: number | null;
  limit_reset: LimitReset | null;
  /** The key's own rate limits per minute, enforced at the edge; null or absent: the gateway's default. */
  requests_per_minute?: number | null;
  tokens_per_minute?: number | null;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
}

export type KeyChanges = Partial<Pick<KeyDoc, 'name' | 'disabled' | 'limit_micros' | 'limit_reset' | 'requests_per_minute' | 'tokens_per_minute'>>;

export interface ListKeysQuery {
  offset: number;
  limit: number;
  includeDisabled: boolean;
}

/** Repository of API keys over the store port (collection `keys`). */
export class KeyStore {
  constructor(private readonly keys: Collection<KeyDoc>) {}

  static over(store: Store): KeyStore {
    return new KeyStore(store.collection<KeyDoc>('keys'));
  }

  async ensureIndexes(): Promise<void> {
    await this.keys.ensureIndex({ fields: { account_id: 1, created_at: 1 } });
    await this.keys.ensureIndex({ fields: { account_id: 1, is_management: 1 } });
  }

  /** Throws `DuplicateKeyError` when a key with the same hash exists. */
  async insert(doc: KeyDoc): Promise<KeyDoc> {
    return this.keys.insertOne(doc);
  }

  findByHash(hash: string): Promise<KeyDoc | null> {
    return this.keys.findOne({ _id: hash });
  }

  /** Keys of other accounts are invisible: they answer null, like unknown hashes. */
  findInAccount(accountId: string, hash: string): Promise<KeyDoc | null> {
    return this.keys.findOne({ _id: hash, account_id: accountId });
  }

  list(accountId: string, q: ListKeysQuery): Promise<KeyDoc[]> {
    const filter: Filter = { account_id: accountId };
    if (!q.includeDisabled) filter.disabled = false;
    return this.keys.find(filter, { sort: { created_at: 1, _id: 1 }, skip: q.offset, limit: q.limit });
  }

  async hasManagementKey(accountId: string): Promise<boolean> {
    return (await this.keys.count({ account_id: accountId, is_management: true })) > 0;
  }

  /** Applies the changes atomically; null when no such key in the account. */
  update(accountId: string, hash: string, changes: KeyChanges, updatedAt: string): Promise<KeyDoc | null> {
    return this.keys.findOneAndUpdate(
      { _id: hash, account_id: accountId },
      { $set: { ...changes, updated_at: updatedAt } },
      { returnDocument: 'after' },
    );
  }

  async delete(accountId: string, hash: string): Promise<boolean> {
    return (await this.keys.deleteOne({ _id: hash, account_id: accountId })) > 0;
  }
}
