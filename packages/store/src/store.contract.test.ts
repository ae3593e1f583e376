import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { createStore, DuplicateKeyError, type Collection, type Doc, type Store, type StoreConfig } from './index';

/**
 * One contract, every engine: the same assertions run against the embedded engine (a temp dir) and the
 * MongoDB engine (a fresh database on the server MONGO_URL names). Each test gets its own location and
 * removes it afterwards.
 */

interface Location {
  config: StoreConfig;
  destroy(): Promise<void>;
}

/** The same server URL with another database name. */
function withDatabase(url: string, db: string): string {
  const m = /^(mongodb(?:\+srv)?:\/\/[^/?]+)(?:\/[^?]*)?(\?.*)?$/.exec(url);
  if (!m) throw new Error(`MONGO_URL is not a mongodb:// URL: ${url}`);
  return `${m[1]}/${db}${m[2] ?? ''}`;
}

async function embeddedLocation(): Promise<Location> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-store-contract-'));
  return { config: { engine: 'embedded', dataDir }, destroy: () => rm(dataDir, { recursive: true, force: true }) };
}

async function mongoLocation(): Promise<Location> {
  const base = process.env.MONGO_URL;
  if (!base) {
    throw new Error(
      'MONGO_URL is not set, so the mongo engine has no server to test against. Run the unit project (its ' +
        'globalSetup starts one), or `bash scripts/engines.sh start && source .cache/engines/env` first.',
    );
  }
  const url = withDatabase(base, `store_contract_${randomUUID().replace(/-/g, '')}`);
  return {
    config: { engine: 'mongo', url },
    async destroy() {
      const conn = await mongoose.createConnection(url).asPromise();
      try {
        await conn.dropDatabase();
      } finally {
        await conn.close();
      }
    },
  };
}

interface User extends Doc {
  n: number;
  tier: string;
  tags?: string[];
  profile: { country: string; age?: number };
  deletedAt?: Date | null;
}

const USERS: User[] = [
  { _id: 'u1', n: 1, tier: 'free', tags: ['a', 'b'], profile: { country: 'DE', age: 30 } },
  { _id: 'u2', n: 2, tier: 'pro', tags: ['b'], profile: { country: 'FR', age: 40 }, deletedAt: null },
  { _id: 'u3', n: 3, tier: 'pro', tags: [], profile: { country: 'DE' }, deletedAt: new Date('2024-01-02T03:04:05Z') },
  { _id: 'u4', n: 4, tier: 'team', profile: { country: 'US', age: 25 } },
  { _id: 'u5', n: 5, tier: 'free', tags: ['c'], profile: { country: 'DE', age: 50 } },
];

const ids = (docs: Doc[]) => docs.map((d) => d._id);

describe.each([
  ['embedded', embeddedLocation],
  ['mongo', mongoLocation],
])('Store contract (%s engine)', (engine, makeLocation) => {
  let location: Location;
  let store: Store;

  beforeEach(async () => {
    location = await makeLocation();
    store = createStore(location.config);
  });

  afterEach(async () => {
    await store?.close();
    await location?.destroy();
  });

  it('names its engine and answers ping', async () => {
    expect(store.engine).toBe(engine);
    expect(await store.ping()).toBe(true);
  });

  describe('insert and read', () => {
    it('inserts a document and finds it by _id; returned documents are detached copies', async () => {
      const users = store.collection<User>('users');
      const input: User = { _id: 'u1', n: 1, tier: 'free', tags: ['a'], profile: { country: 'DE', age: 30 }, deletedAt: new Date(1000) };
      const inserted = await users.insertOne(input);
      expect(inserted).toEqual(input);

      input.profile.age = 99;
      const found = await users.findOne({ _id: 'u1' });
      expect(found).toEqual({ _id: 'u1', n: 1, tier: 'free', tags: ['a'], profile: { country: 'DE', age: 30 }, deletedAt: new Date(1000) });

      found!.profile.age = 0;
      found!.tags!.push('mutated');
      found!.deletedAt!.setTime(0);
      expect(await users.findOne({ _id: 'u1' })).toEqual({
        _id: 'u1', n: 1, tier: 'free', tags: ['a'], profile: { country: 'DE', age: 30 }, deletedAt: new Date(1000),
      });
      expect(await users.findOne({ _id: 'missing' })).toBeNull();
    });

    // Callers' free-form objects (metadata, archived request bodies) may hold any key: an own `__proto__` stays
    // a field, never the prototype of the stored copy (an assignment would set that and drop the field).
    it('keeps fields named like Object.prototype\'s members as fields', async () => {
      const notes = store.collection<Doc & { meta: Record<string, unknown> }>('notes');
      const meta = JSON.parse('{"__proto__":{"polluted":true},"constructor":"c","toString":"t","a":1}') as Record<string, unknown>;
      const inserted = await notes.insertOne({ _id: 'n1', meta });
      const found = await notes.findOne({ _id: 'n1' });
      for (const doc of [inserted, found]) {
        expect(Object.getPrototypeOf(doc!.meta)).toBe(Object.prototype);
        expect(Object.entries(doc!.meta)).toEqual([['__proto__', { polluted: true }], ['constructor', 'c'], ['toString', 't'], ['a', 1]]);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('refuses a document without a string _id', async () => {
      const users = store.collection<Doc>('users');
      await expect(users.insertOne({} as Doc)).rejects.toThrow(TypeError);
      await expect(users.insertOne({ _id: 42 } as unknown as Doc)).rejects.toThrow(TypeError);
    });
  });

  describe('find', () => {
    let users: Collection<User>;
    beforeEach(async () => {
      users = store.collection<User>('users');
      await users.insertMany(USERS);
    });

    it.each<[string, Record<string, unknown>, string[]]>([
      ['$gt', { n: { $gt: 2 } }, ['u3', 'u4', 'u5']],
      ['$gte and $lt together', { n: { $gte: 2, $lt: 4 } }, ['u2', 'u3']],
      ['$eq', { n: { $eq: 3 } }, ['u3']],
      ['$in', { tier: { $in: ['pro', 'team'] } }, ['u2', 'u3', 'u4']],
      ['$nin', { tier: { $nin: ['free', 'team'] } }, ['u2', 'u3']],
      ['$ne', { tier: { $ne: 'free' } }, ['u2', 'u3', 'u4']],
      ['dotted equality', { 'profile.country': 'DE' }, ['u1', 'u3', 'u5']],
      ['dotted range skips missing fields', { 'profile.age': { $lt: 35 } }, ['u1', 'u4']],
      ['$exists false on a dotted path', { 'profile.age': { $exists: false } }, ['u3']],
      ['$exists true counts null as present', { deletedAt: { $exists: true } }, ['u2', 'u3']],
      ['null matches null and missing', { deletedAt: null }, ['u1', 'u2', 'u4', 'u5']],
      ['$ne null means present and not null', { deletedAt: { $ne: null } }, ['u3']],
      ['equality on an array field matches an element', { tags: 'b' }, ['u1', 'u2']],
      ['$in on an array field', { tags: { $in: ['a', 'c'] } }, ['u1', 'u5']],
      ['$or', { $or: [{ tier: 'team' }, { 'profile.age': { $gte: 45 } }] }, ['u4', 'u5']],
      ['$or with another condition', { 'profile.country': 'DE', $or: [{ n: 1 }, { n: 5 }, { n: 4 }] }, ['u1', 'u5']],
      ['a date range', { deletedAt: { $gt: new Date('2024-01-01T00:00:00Z') } }, ['u3']],
      ['no match', { tier: 'enterprise' }, []],
    ])('filters with %s', async (_name, filter, expected) => {
      expect(ids(await users.find(filter, { sort: { n: 1 } }))).toEqual(expected);
      expect(await users.count(filter)).toBe(expected.length);
    });

    it('sorts, skips and limits', async () => {
      expect(ids(await users.find({}, { sort: { n: -1 } }))).toEqual(['u5', 'u4', 'u3', 'u2', 'u1']);
      expect(ids(await users.find({}, { sort: { tier: 1, n: -1 } }))).toEqual(['u5', 'u1', 'u3', 'u2', 'u4']);
      // A missing field sorts as null, before every number.
      expect(ids(await users.find({}, { sort: { 'profile.age': 1 } }))).toEqual(['u3', 'u4', 'u1', 'u2', 'u5']);
      expect(ids(await users.find({}, { sort: { n: 1 }, skip: 1, limit: 2 }))).toEqual(['u2', 'u3']);
      expect(ids(await users.find({ tier: 'free' }, { sort: { n: 1 }, skip: 1 }))).toEqual(['u5']);
      expect(await users.find({ tier: { $ne: 'team' } }, { limit: 3 })).toHaveLength(3);
      expect((await users.findOne({ tier: 'pro' }, { sort: { n: -1 } }))?._id).toBe('u3');
      expect((await users.findOne({}, { sort: { n: 1 }, skip: 2 }))?._id).toBe('u3');
    });

    it('sorts an indexed field holding every type in MongoDB\'s type order, and limits across the types', async () => {
      // The embedded engine reads such a sort from the index one type at a time; the order must still be MongoDB's.
      const mixed = store.collection<{ _id: string; v?: unknown }>('mixed');
      await mixed.ensureIndex({ fields: { v: 1 } });
      await mixed.insertMany([
        { _id: 'a' }, { _id: 'b', v: null }, { _id: 'c', v: 2 }, { _id: 'd', v: 1.5 }, { _id: 'e', v: 'b' }, { _id: 'f', v: 'a' },
        { _id: 'g', v: true }, { _id: 'h', v: false }, { _id: 'i', v: new Date('2024-01-01T00:00:00Z') }, { _id: 'j', v: { x: 1 } },
        { _id: 'k', v: 10 }, { _id: 'l', v: 'B' },
      ]);
      const ascending = ['a', 'b', 'd', 'c', 'k', 'l', 'f', 'e', 'j', 'h', 'g', 'i'];
      expect(ids(await mixed.find({}, { sort: { v: 1, _id: 1 } }))).toEqual(ascending);
      expect(ids(await mixed.find({}, { sort: { v: -1, _id: -1 } }))).toEqual([...ascending].reverse());
      expect(ids(await mixed.find({}, { sort: { v: -1 }, limit: 3 }))).toEqual(['i', 'g', 'h']);
      expect(ids(await mixed.find({}, { sort: { v: 1 }, skip: 2, limit: 4 }))).toEqual(['d', 'c', 'k', 'l']);
      expect((await mixed.findOne({ v: { $exists: true } }, { sort: { v: -1 }, skip: 4 }))?._id).toBe('e');
      // Filters SQL takes whole ($gte, $or, $and) and one it cannot ($ne).
      expect(ids(await mixed.find({ v: { $gte: 2 } }, { sort: { v: -1 } }))).toEqual(['k', 'c']);
      expect(ids(await mixed.find({ $or: [{ v: 'a' }, { v: { $lt: 2 } }] }, { sort: { v: 1 } }))).toEqual(['d', 'f']);
      expect(await mixed.count({ $or: [{ v: 'a' }, { v: { $lt: 2 } }] })).toBe(2);
      expect(ids(await mixed.find({ $and: [{ v: { $gte: 1 } }, { v: { $lt: 10 } }] }, { sort: { v: 1 } }))).toEqual(['d', 'c']);
      expect(ids(await mixed.find({ v: { $ne: 'a' } }, { sort: { v: 1, _id: 1 }, limit: 5 }))).toEqual(['a', 'b', 'd', 'c', 'k']);
      expect(await mixed.deleteMany({ $or: [{ v: { $gt: 5 } }, { v: true }, { v: false }] })).toBe(3);
      expect(ids(await mixed.find({}, { sort: { v: -1 }, limit: 2 }))).toEqual(['i', 'j']);
    });

    it('counts', async () => {
      expect(await users.count({})).toBe(5);
      expect(await users.count({ tier: 'pro' })).toBe(2);
    });
  });

  describe('atomic updates', () => {
    it('applies a guarded $inc only while the guard holds', async () => {
      const accounts = store.collection<Doc & { balance: number }>('accounts');
      await accounts.insertOne({ _id: 'acct', balance: 10 });
      const debit = () => accounts.updateOne({ _id: 'acct', balance: { $gte: 5 } }, { $inc: { balance: -5 } });
      expect(await debit()).toEqual({ matched: 1, modified: 1, upsertedId: null });
      expect(await debit()).toEqual({ matched: 1, modified: 1, upsertedId: null });
      expect(await debit()).toEqual({ matched: 0, modified: 0, upsertedId: null });
      expect((await accounts.findOne({ _id: 'acct' }))?.balance).toBe(0);
    });

    it('lets exactly 20 of 50 concurrent guarded decrements through', async () => {
      const accounts = store.collection<Doc & { balance: number }>('accounts');
      await accounts.insertOne({ _id: 'acct', balance: 20 });
      const results = await Promise.all(
        Array.from({ length: 50 }, () => accounts.updateOne({ _id: 'acct', balance: { $gte: 1 } }, { $inc: { balance: -1 } })),
      );
      expect(results.filter((r) => r.modified === 1)).toHaveLength(20);
      expect((await accounts.findOne({ _id: 'acct' }))?.balance).toBe(0);
    });

    it('lets exactly one of 20 concurrent claims win, returning the document before the update', async () => {
      const jobs = store.collection<Doc & { status: string; worker?: string }>('jobs');
      await jobs.insertOne({ _id: 'job', status: 'queued' });
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          jobs.findOneAndUpdate({ _id: 'job', status: 'queued' }, { $set: { status: 'running', worker: `w${i}` } }, { returnDocument: 'before' }),
        ),
      );
      const won = claims.flatMap((c, i) => (c ? [{ doc: c, worker: `w${i}` }] : []));
      expect(won).toHaveLength(1);
      expect(won[0].doc).toEqual({ _id: 'job', status: 'queued' });
      expect(await jobs.findOne({ _id: 'job' })).toEqual({ _id: 'job', status: 'running', worker: won[0].worker });
    });

    it('hands each of 5 queued jobs to exactly one of 20 concurrent claimers, returning the document after', async () => {
      const jobs = store.collection<Doc & { status: string; worker?: string }>('jobs');
      await jobs.insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: `job${i}`, status: 'queued' })));
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) => jobs.findOneAndUpdate({ status: 'queued' }, { $set: { status: 'running', worker: `w${i}` } })),
      );
      const won = claims.filter((c) => c !== null);
      expect(won).toHaveLength(5);
      expect(new Set(ids(won)).size).toBe(5);
      for (const doc of won) expect(doc.status).toBe('running');
      expect(await jobs.count({ status: 'queued' })).toBe(0);
      expect(await jobs.findOneAndUpdate({ status: 'queued' }, { $set: { status: 'running' } })).toBeNull();
    });

    it('applies $set, $unset, $inc, $push, $max and $min; reports a no-op as not modified', async () => {
      const stats = store.collection<Doc & Record<string, unknown>>('stats');
      await stats.insertOne({ _id: 's', hi: 5, lo: 5, gone: true, list: [1], nested: { a: 1 } });
      const r = await stats.updateOne(
        { _id: 's' },
        {
          $set: { 'nested.b': 2, fresh: 'x' },
          $unset: { gone: 1 },
          $inc: { count: 3 },
          $push: { list: { $each: [2, 3, 4], $slice: -3 } },
          $max: { hi: 9 },
          $min: { lo: 1 },
        },
      );
      expect(r).toEqual({ matched: 1, modified: 1, upsertedId: null });
      expect(await stats.findOne({ _id: 's' })).toEqual({ _id: 's', hi: 9, lo: 1, list: [2, 3, 4], nested: { a: 1, b: 2 }, fresh: 'x', count: 3 });
      expect(await stats.updateOne({ _id: 's' }, { $set: { fresh: 'x' }, $max: { hi: 1 } })).toEqual({ matched: 1, modified: 0, upsertedId: null });
      expect(await stats.updateMany({}, { $inc: { count: 1 } })).toEqual({ matched: 1, modified: 1, upsertedId: null });
    });

    it('updates many documents', async () => {
      const users = store.collection<User>('users');
      await users.insertMany(USERS);
      expect(await users.updateMany({ tier: 'free' }, { $set: { tier: 'basic' } })).toEqual({ matched: 2, modified: 2, upsertedId: null });
      expect(await users.updateMany({ tier: 'none' }, { $set: { tier: 'basic' } })).toEqual({ matched: 0, modified: 0, upsertedId: null });
      expect(ids(await users.find({ tier: 'basic' }, { sort: { n: 1 } }))).toEqual(['u1', 'u5']);
    });

    it('sets scalar fields on many documents: only those that change count as modified, field order and the rest kept', async () => {
      const marks = store.collection<Doc & { batch: string; state: string; at?: number | null; ok?: boolean; nested?: { a: number } }>('marks');
      await marks.insertMany([
        { _id: 'm1', batch: 'b1', state: 'open', nested: { a: 1 } },
        { _id: 'm2', batch: 'b1', state: 'done', at: 5, ok: true },
        { _id: 'm3', batch: 'b2', state: 'open' },
      ]);
      await marks.updateOne({ _id: 'm2' }, { $set: { at: 7 } });
      expect(await marks.updateMany({ batch: 'b1' }, { $set: { state: 'done', at: 7, ok: true } })).toEqual({ matched: 2, modified: 1, upsertedId: null });
      const m1 = await marks.findOne({ _id: 'm1' });
      expect(m1).toEqual({ _id: 'm1', batch: 'b1', state: 'done', nested: { a: 1 }, at: 7, ok: true });
      expect(Object.keys(m1!)).toEqual(['_id', 'batch', 'state', 'nested', 'at', 'ok']);
      expect(await marks.updateMany({ batch: 'b1' }, { $set: { at: null, ok: false } })).toEqual({ matched: 2, modified: 2, upsertedId: null });
      expect(await marks.find({ at: null, ok: false }, { sort: { _id: 1 } })).toHaveLength(2);
      expect(await marks.findOne({ _id: 'm3' })).toEqual({ _id: 'm3', batch: 'b2', state: 'open' });
    });
  });

  describe('upsert', () => {
    it('inserts on the first call and updates after; $setOnInsert applies only on insert', async () => {
      const counters = store.collection<Doc & { n: number; createdBy: string; lastBy: string }>('counters');
      const bump = (by: string) =>
        counters.updateOne({ _id: 'c' }, { $inc: { n: 1 }, $set: { lastBy: by }, $setOnInsert: { createdBy: by } }, { upsert: true });
      expect(await bump('first')).toEqual({ matched: 0, modified: 0, upsertedId: 'c' });
      expect(await bump('second')).toEqual({ matched: 1, modified: 1, upsertedId: null });
      expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 2, createdBy: 'first', lastBy: 'second' });
    });

    it('builds the inserted document from the equality fields of the filter, with a string _id', async () => {
      const settings = store.collection<Doc & Record<string, unknown>>('settings');
      const r = await settings.updateOne(
        { tenant: 't1', 'meta.kind': 'limits', version: { $gt: 3 } },
        { $set: { value: 10 } },
        { upsert: true },
      );
      expect(r.matched).toBe(0);
      expect(typeof r.upsertedId).toBe('string');
      expect(await settings.findOne({ _id: r.upsertedId })).toEqual({ _id: r.upsertedId, tenant: 't1', meta: { kind: 'limits' }, value: 10 });
    });

    it('returns null before and the new document after when findOneAndUpdate upserts', async () => {
      const jobs = store.collection<Doc & { status: string; attempts?: number }>('jobs');
      expect(await jobs.findOneAndUpdate({ _id: 'a' }, { $set: { status: 'new' } }, { upsert: true, returnDocument: 'before' })).toBeNull();
      expect(await jobs.findOneAndUpdate({ _id: 'b' }, { $set: { status: 'new' }, $inc: { attempts: 1 } }, { upsert: true })).toEqual({
        _id: 'b', status: 'new', attempts: 1,
      });
      expect(await jobs.findOneAndUpdate({ _id: 'b' }, { $inc: { attempts: 1 } }, { upsert: true, returnDocument: 'before' })).toEqual({
        _id: 'b', status: 'new', attempts: 1,
      });
      expect(await jobs.count({})).toBe(2);
    });

    it('does not insert without upsert', async () => {
      const jobs = store.collection<Doc & { status: string }>('jobs');
      expect(await jobs.updateOne({ _id: 'x' }, { $set: { status: 'new' } })).toEqual({ matched: 0, modified: 0, upsertedId: null });
      expect(await jobs.findOneAndUpdate({ _id: 'x' }, { $set: { status: 'new' } })).toBeNull();
      expect(await jobs.count({})).toBe(0);
    });
  });

  describe('unique indexes', () => {
    type Account = Doc & { email: string; name?: string };
    let accounts: Collection<Account>;
    beforeEach(async () => {
      accounts = store.collection<Account>('accounts');
      await accounts.ensureIndex({ fields: { email: 1 }, unique: true });
      await accounts.ensureIndex({ fields: { email: 1 }, unique: true }); // idempotent
      await accounts.insertOne({ _id: 'a', email: 'a@x' });
      await accounts.insertOne({ _id: 'b', email: 'b@x' });
    });

    it('rejects insertOne of a duplicate key or _id with DuplicateKeyError', async () => {
      const err = await accounts.insertOne({ _id: 'c', email: 'a@x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DuplicateKeyError);
      expect(err).toMatchObject({ status: 409, code: 'duplicate_key', collection: 'accounts' });
      await expect(accounts.insertOne({ _id: 'a', email: 'other@x' })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await accounts.count({})).toBe(2);
    });

    it('rejects insertMany with a duplicate', async () => {
      await expect(accounts.insertMany([{ _id: 'c', email: 'c@x' }, { _id: 'd', email: 'a@x' }])).rejects.toBeInstanceOf(DuplicateKeyError);
      expect((await accounts.findOne({ _id: 'a' }))?.email).toBe('a@x');
      expect(await accounts.count({ _id: 'd' })).toBe(0);
    });

    it('inserts the others and reports duplicates with ignoreDuplicates', async () => {
      const r = await accounts.insertMany(
        [
          { _id: 'c', email: 'c@x' },
          { _id: 'a', email: 'new@x' },
          { _id: 'd', email: 'd@x' },
          { _id: 'e', email: 'b@x' },
          { _id: 'f', email: 'c@x' },
        ],
        { ignoreDuplicates: true },
      );
      expect(r.insertedIds.sort()).toEqual(['c', 'd']);
      expect(r.duplicateIds.sort()).toEqual(['a', 'e', 'f']);
      expect(ids(await accounts.find({}, { sort: { _id: 1 } }))).toEqual(['a', 'b', 'c', 'd']);
      expect((await accounts.findOne({ _id: 'a' }))?.email).toBe('a@x');
      expect(await accounts.insertMany([{ _id: 'g', email: 'g@x' }], { ignoreDuplicates: true })).toEqual({ insertedIds: ['g'], duplicateIds: [] });
    });

    it('rejects an update that would create a duplicate, leaving the document unchanged', async () => {
      await expect(accounts.updateOne({ _id: 'b' }, { $set: { email: 'a@x' } })).rejects.toBeInstanceOf(DuplicateKeyError);
      await expect(accounts.findOneAndUpdate({ _id: 'b' }, { $set: { email: 'a@x' } })).rejects.toBeInstanceOf(DuplicateKeyError);
      await expect(accounts.updateOne({ _id: 'z' }, { $set: { email: 'a@x' } }, { upsert: true })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect((await accounts.findOne({ _id: 'b' }))?.email).toBe('b@x');
      expect(await accounts.count({})).toBe(2);
    });

    it('enforces compound unique indexes', async () => {
      const members = store.collection<Doc & { tenant: string; name: string }>('members');
      await members.ensureIndex({ fields: { tenant: 1, name: 1 }, unique: true });
      await members.insertMany([
        { _id: '1', tenant: 't1', name: 'x' },
        { _id: '2', tenant: 't2', name: 'x' },
        { _id: '3', tenant: 't1', name: 'y' },
      ]);
      await expect(members.insertOne({ _id: '4', tenant: 't1', name: 'x' })).rejects.toBeInstanceOf(DuplicateKeyError);
      await expect(members.updateOne({ _id: '3' }, { $set: { name: 'x' } })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(ids(await members.find({ tenant: 't1', name: 'x' }))).toEqual(['1']);
    });

    it('drops an index: its uniqueness no longer holds, queries on its field still answer, and dropping again is a no-op', async () => {
      await accounts.dropIndex({ fields: { email: 1 }, unique: true });
      await accounts.dropIndex({ fields: { email: 1 }, unique: true });
      await accounts.insertOne({ _id: 'c', email: 'a@x' });
      expect(ids(await accounts.find({ email: 'a@x' }, { sort: { _id: 1 } }))).toEqual(['a', 'c']);
      await accounts.updateOne({ _id: 'b' }, { $set: { email: ['a@x', 'b@x'] as never } });
      expect(ids(await accounts.find({ email: 'a@x' }, { sort: { _id: 1 } }))).toEqual(['a', 'b', 'c']);
      await store.collection('never_written').dropIndex({ fields: { email: 1 } });
    });

    it('enforces sparse unique indexes only among documents that have the field', async () => {
      const keys = store.collection<Doc & { externalId?: string }>('keys');
      await keys.ensureIndex({ fields: { externalId: 1 }, unique: true, sparse: true });
      await keys.insertMany([{ _id: '1' }, { _id: '2' }, { _id: '3', externalId: 'e1' }]);
      await expect(keys.insertOne({ _id: '4', externalId: 'e1' })).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await keys.count({})).toBe(3);
    });
  });

  it('deletes one and many', async () => {
    const users = store.collection<User>('users');
    await users.insertMany(USERS);
    expect(await users.deleteOne({ tier: 'free' })).toBe(1);
    expect(await users.count({ tier: 'free' })).toBe(1);
    expect(await users.deleteOne({ tier: 'enterprise' })).toBe(0);
    expect(await users.deleteMany({ tier: 'pro' })).toBe(2);
    expect(await users.deleteMany({ tier: 'pro' })).toBe(0);
    expect(await users.deleteMany({})).toBe(2);
    expect(await users.count({})).toBe(0);
  });

  it('keeps data and unique indexes across a restart', async () => {
    const users = store.collection<User>('users');
    await users.ensureIndex({ fields: { n: 1 }, unique: true });
    await users.insertMany(USERS);
    await users.updateOne({ _id: 'u2' }, { $set: { tier: 'team' }, $push: { tags: 'z' } });
    await users.deleteOne({ _id: 'u4' });
    await store.close();

    store = createStore(location.config);
    const reopened = store.collection<User>('users');
    expect(await reopened.count({})).toBe(4);
    expect(await reopened.findOne({ _id: 'u2' })).toEqual({ ...USERS[1], tier: 'team', tags: ['b', 'z'] });
    expect(await reopened.findOne({ _id: 'u3' })).toEqual(USERS[2]);
    expect(await reopened.findOne({ _id: 'u4' })).toBeNull();
    await expect(reopened.insertOne({ ...USERS[0], _id: 'u9' })).rejects.toBeInstanceOf(DuplicateKeyError);
  });
});
