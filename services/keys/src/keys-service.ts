import { AuthenticationError, ConflictError, NotFoundError, PermissionError, type Logger } from '@gw/platform';
import type { TypedBus } from '@gw/bus';
import { TOPICS, type KeyChanged, type TopicMessages } from '@gw/proto';
import { DuplicateKeyError } from '@gw/store';
import type { SeedAccount } from './config';
import { hashSecret, maskSecret, newSecret, sameHash } from './key-secret';
import type { KeyChanges, KeyDoc, KeyStore, LimitReset } from './key-store';
import { NO_USAGE, type KeyUsageSource } from './key-usage';
import { toKeyObject, type KeyObject } from './key-view';

export const LIST_PAGE_SIZE = 100;

/** Who is asking: the account and key hash the edge authenticated. */
export interface Caller {
  accountId: string;
  keyHash: string;
  traceId?: string;
}

declare const verifiedManagement: unique symbol;
/** A caller whose key was just checked to be an active management key; only `asManager` makes one. */
export type Manager = Caller & { readonly [verifiedManagement]: true };

export interface CreateKeyInput {
  name: string;
  limit_micros: number | null;
  limit_reset: LimitReset | null;
  expires_at: string | null;
  /** Rate limits per minute of the key; null: the gateway's default. */
  requests_per_minute?: number | null;
  tokens_per_minute?: number | null;
}

export interface KeysServiceDeps {
  keys: KeyStore;
  usage: KeyUsageSource;
  bus: TypedBus<TopicMessages>;
  logger: Logger;
  /**
   * Shows the operator a bootstrap key line, outside the logs: the only place a generated secret is ever put
   * (the local start's own terminal, or an owner-only file for a standalone service).
   */
  announce: (line: string) => void | Promise<void>;
  now?: () => Date;
}

/** API keys of an account: creation, management by hash, and authentication for the edge. */
export class KeysService {
  private readonly now: () => Date;

  constructor(private readonly deps: KeysServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Resolves a secret to its key; unknown, disabled and expired keys are refused alike (401). */
  async authenticate(secret: string): Promise<KeyDoc> {
    if (!secret) throw new AuthenticationError('Missing API key');
    const hash = hashSecret(secret);
    const doc = await this.deps.keys.findByHash(hash);
    if (!doc || !sameHash(doc._id, hash)) throw new AuthenticationError('Invalid API key');
    this.assertUsable(doc);
    return doc;
  }

  /** The key making the request, with its usage (`GET /v1/key`). */
  async currentKey(caller: Caller): Promise<{ key: KeyObject; isManagement: boolean }> {
    const doc = await this.callerKey(caller);
    const [key] = await this.withUsage([doc], caller.traceId);
    return { key, isManagement: doc.is_management };
  }

  /**
   * Checks that the caller may manage keys. Re-reads the caller's key instead of trusting the edge's
   * cached view, so a key disabled or deleted a moment ago cannot keep managing keys.
   */
  async asManager(caller: Caller): Promise<Manager> {
    const doc = await this.callerKey(caller);
    if (!doc.is_management) throw new PermissionError('Managing keys needs a management key');
    return caller as Manager;
  }

  async list(manager: Manager, q: { offset: number; includeDisabled: boolean }): Promise<KeyObject[]> {
    const docs = await this.deps.keys.list(manager.accountId, { ...q, limit: LIST_PAGE_SIZE });
    return this.withUsage(docs, manager.traceId);
  }

  /** Creates an ordinary key; the secret is returned here and never again. */
  async create(manager: Manager, input: CreateKeyInput): Promise<{ key: KeyObject; secret: string }> {
    const { doc, secret } = await this.insertKey(manager.accountId, input, false);
    // A new key has spent nothing; asking billing here could only turn a created key into a lost secret.
    return { key: toKeyObject(doc, NO_USAGE), secret };
  }

  async update(manager: Manager, hash: string, changes: KeyChanges): Promise<KeyObject> {
    if (changes.disabled === true && hash === manager.keyHash) throw new ConflictError('A key cannot disable itself', 'self_disable');
    if (!(await this.deps.keys.findInAccount(manager.accountId, hash))) throw keyNotFound();
    // Usage first: if billing is down the request fails before anything is written.
    const usage = await this.deps.usage.usageOf([hash], manager.traceId);
    const doc = await this.deps.keys.update(manager.accountId, hash, changes, this.now().toISOString());
    if (!doc) throw keyNotFound();
    await this.publishChange(hash, 'updated');
    return toKeyObject(doc, usage.get(hash) ?? NO_USAGE);
  }

  async delete(manager: Manager, hash: string): Promise<void> {
    if (hash === manager.keyHash) throw new ConflictError('A key cannot delete itself', 'self_delete');
    if (!(await this.deps.keys.delete(manager.accountId, hash))) throw keyNotFound();
    await this.publishChange(hash, 'deleted');
  }

  /**
   * Gives every seed account without a management key one. A random secret is announced once (never
   * logged); a configured one only has its masked label logged (the operator has it). Idempotent across
   * restarts and replicas.
   */
  async ensureBootstrapKeys(seeds: SeedAccount[]): Promise<void> {
    for (const seed of seeds) {
      if (await this.deps.keys.hasManagementKey(seed.id)) continue;
      const input: CreateKeyInput = { name: 'Bootstrap management key', limit_micros: null, limit_reset: null, expires_at: null };
      let created;
      try {
        created = await this.insertKey(seed.id, input, true, seed.management_key);
      } catch (err) {
        if (err instanceof DuplicateKeyError && seed.management_key) {
          const existing = await this.deps.keys.findByHash(hashSecret(seed.management_key));
          if (existing?.account_id === seed.id && existing.is_management) continue; // another replica made it
          throw new Error(`SEED_ACCOUNTS: the management_key of account ${seed.id} is already used by another key`);
        }
        throw err;
      }
      this.deps.logger.info({ account_id: seed.id, label: created.doc.label, from_seed: Boolean(seed.management_key) }, 'bootstrap management key created');
      if (!seed.management_key) {
        await this.deps.announce(`[keys] Management key for account ${seed.id} (shown once, store it now): ${created.secret}`);
      }
    }
  }

  private async insertKey(accountId: string, input: CreateKeyInput, isManagement: boolean, givenSecret?: string) {
    const secret = givenSecret ?? newSecret();
    const at = this.now().toISOString();
    const doc: KeyDoc = {
      _id: hashSecret(secret),
      account_id: accountId,
      name: input.name,
      label: maskSecret(secret),
      disabled: false,
      is_management: isManagement,
      limit_micros: input.limit_micros,
      limit_reset: input.limit_reset,
      requests_per_minute: input.requests_per_minute ?? null,
      tokens_per_minute: input.tokens_per_minute ?? null,
      created_at: at,
      updated_at: at,
      expires_at: input.expires_at,
    };
    await this.deps.keys.insert(doc);
    return { doc, secret };
  }

  private async callerKey(caller: Caller): Promise<KeyDoc> {
    const doc = await this.deps.keys.findInAccount(caller.accountId, caller.keyHash);
    if (!doc) throw new AuthenticationError('Invalid API key');
    this.assertUsable(doc);
    return doc;
  }

  private assertUsable(doc: KeyDoc): void {
    if (doc.disabled) throw new AuthenticationError('API key is disabled', 'key_disabled');
    if (doc.expires_at !== null && Date.parse(doc.expires_at) <= this.now().getTime()) {
      throw new AuthenticationError('API key has expired', 'key_expired');
    }
  }

  private async withUsage(docs: KeyDoc[], traceId?: string): Promise<KeyObject[]> {
    const usage = await this.deps.usage.usageOf(docs.map((d) => d._id), traceId);
    return docs.map((d) => toKeyObject(d, usage.get(d._id) ?? NO_USAGE));
  }

  /**
   * The change is already written; a lost notification only leaves the edge's cache stale until its
   * short TTL, so it is logged rather than turned into a failure the caller could not retry cleanly.
   */
  private async publishChange(hash: string, change: 'updated' | 'deleted'): Promise<void> {
    const value: KeyChanged = { key_hash: hash, change };
    try {
      await this.deps.bus.publish(TOPICS.keys, [{ key: hash, value }]);
    } catch (err) {
      this.deps.logger.error({ err, key_hash: hash, change }, 'publishing KeyChanged failed; edge caches expire by TTL');
    }
  }
}

function keyNotFound(): NotFoundError {
  return new NotFoundError('No key with this hash', 'hash', 'key_not_found');
}
