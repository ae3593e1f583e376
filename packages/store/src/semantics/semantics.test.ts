import type { Filter, Update } from '../port';
import { compileFilter } from './filter';
import { sortDocuments } from './sort';
import { applyUpdate, planUpdate, upsertBase } from './update';
import type { PlainObject } from './values';

/**
 * MongoDB semantics the embedded engine reproduces where the Mongo-wire test server (mongo-java-server)
 * differs from MongoDB, so the contract suite cannot pin them: null against missing fields and arrays,
 * implicit array traversal (as MongoDB's path iterator, src/mongo/db/matcher/path.cpp, defines it), range
 * operators on null, and updates on null-valued fields.
 */

const matches = (filter: Filter, doc: PlainObject) => compileFilter(filter)(doc);

describe('filter semantics', () => {
  it.each<[string, Filter, PlainObject, boolean]>([
    ['null matches a missing field', { a: null }, {}, true],
    ['null matches an array holding null', { a: null }, { a: [1, null] }, true],
    ['null does not match an empty array', { a: null }, { a: [] }, false],
    ['$gte null matches a missing field', { a: { $gte: null } }, {}, true],
    ['$lte null matches null', { a: { $lte: null } }, { a: null }, true],
    ['$gt null matches nothing', { a: { $gt: null } }, { a: 1 }, false],
    ['range operators do not cross types', { a: { $gt: 1 } }, { a: 'x' }, false],
    ['a sub-document without the field is missing', { 'a.b': null }, { a: [{ b: 1 }, { c: 1 }] }, true],
    ['scalars in a traversed array reach nothing', { 'a.b': null }, { a: [1, 2] }, false],
    ['an empty traversed array reaches nothing', { 'a.b': null }, { a: [] }, false],
    ['... so $exists false matches it', { 'a.b': { $exists: false } }, { a: [] }, true],
    ['... and $ne null matches it', { 'a.b': { $ne: null } }, { a: [1] }, true],
    ['$exists false needs every element to lack the field', { 'a.b': { $exists: false } }, { a: [{ b: 1 }, {}] }, false],
    ['a numeric segment selects the element', { 'a.1': 'y' }, { a: ['x', 'y'] }, true],
    ['a numeric segment also looks up that key in sub-documents', { 'a.0.b': null }, { a: [{ b: 1 }] }, true],
    ['an array selected by position is not traversed', { 'a.0': 1 }, { a: [[1, 2]] }, false],
    ['leaf traversal is one level deep', { a: 1 }, { a: [[1]] }, false],
    ['an array operand matches the whole array', { a: [1, 2] }, { a: [1, 2] }, true],
    ['sub-document equality depends on field order', { a: { x: 1, y: 2 } }, { a: { y: 2, x: 1 } }, false],
    ['$in with null matches missing', { a: { $in: [null, 5] } }, {}, true],
    ['$nin with null excludes missing', { a: { $nin: [null] } }, {}, false],
    ['dates compare by time', { a: { $lt: new Date(2000) } }, { a: new Date(1000) }, true],
  ])('%s', (_name, filter, doc, expected) => {
    expect(matches(filter, doc)).toBe(expected);
  });

  it('refuses operators outside the port', () => {
    expect(() => compileFilter({ a: { $regex: 'x' } })).toThrow(/Unsupported query operator/);
    expect(() => compileFilter({ $where: 'true' })).toThrow(/Unsupported query operator/);
  });
});

describe('sort semantics', () => {
  it('orders by BSON type, missing as null, arrays by their smallest element and an empty array first', () => {
    const docs = [
      { _id: 'date', v: new Date(0) },
      { _id: 'bool', v: true },
      { _id: 'string', v: 'a' },
      { _id: 'number', v: 2 },
      { _id: 'array', v: [5, 1] },
      { _id: 'missing' },
      { _id: 'null', v: null },
      { _id: 'empty', v: [] },
      { _id: 'object', v: { x: 1 } },
    ];
    expect(sortDocuments(docs, { v: 1 }).map((d) => d._id)).toEqual([
      'empty', 'missing', 'null', 'array', 'number', 'string', 'object', 'bool', 'date',
    ]);
    // Descending, the array sorts by its largest element (5), above the number 2.
    expect(sortDocuments(docs, { v: -1 }).map((d) => d._id).slice(0, 6)).toEqual(['date', 'bool', 'object', 'string', 'array', 'number']);
  });
});

describe('update semantics', () => {
  const update = (doc: PlainObject, u: Update, inserting = false) => applyUpdate(structuredClone(doc), planUpdate(u), inserting);

  it('refuses $inc and $push on a null field, and creating a field inside null', () => {
    expect(() => update({ _id: '1', n: null }, { $inc: { n: 1 } })).toThrow(/non-numeric/);
    expect(() => update({ _id: '1', l: null }, { $push: { l: 1 } })).toThrow(/must be an array/);
    expect(() => update({ _id: '1', a: null }, { $set: { 'a.b': 1 } })).toThrow(/Cannot create field 'b'/);
  });

  it('refuses conflicting paths and a changed _id', () => {
    expect(() => planUpdate({ $set: { a: 1 }, $inc: { 'a.b': 1 } })).toThrow(/conflict/);
    expect(() => planUpdate({ $set: { a: 1 }, $setOnInsert: { a: 2 } })).toThrow(/conflict/);
    expect(() => update({ _id: '1' }, { $set: { _id: '2' } })).toThrow(/immutable field '_id'/);
  });

  it('applies $setOnInsert only when inserting, and pads arrays set by position', () => {
    expect(update({ _id: '1' }, { $setOnInsert: { a: 1 }, $set: { 'l.2': 'x' } })).toEqual({ _id: '1', l: { 2: 'x' } });
    expect(update({ _id: '1', l: [] }, { $setOnInsert: { a: 1 }, $set: { 'l.2': 'x' } }, true)).toEqual({ _id: '1', l: [null, null, 'x'], a: 1 });
  });

  it('compares $max/$min across types in BSON order', () => {
    expect(update({ _id: '1', v: 10 }, { $max: { v: 'a' } })).toEqual({ _id: '1', v: 'a' });
    expect(update({ _id: '1', v: 10 }, { $min: { v: null } })).toEqual({ _id: '1', v: null });
  });

  it('starts an upsert from the equality fields of the filter', () => {
    expect(upsertBase({ a: 1, 'b.c': 'x', d: { $gt: 1 }, e: { $eq: 2 }, $and: [{ f: 3 }], $or: [{ g: 4 }] })).toEqual({
      a: 1, b: { c: 'x' }, e: 2, f: 3, g: 4,
    });
    expect(upsertBase({ $or: [{ a: 1 }, { b: 2 }] })).toEqual({});
  });
});
