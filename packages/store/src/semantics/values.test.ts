import { decodeDoc, encodeDoc } from '../embedded/json-codec';
import { toStoredValue, type PlainObject } from './values';

/** How a document is stored: what the driver would keep, and what neither engine can hold, refused by its path. */
describe('stored values', () => {
  it('keeps what the driver keeps: undefined as null, functions dropped from objects and null in arrays', () => {
    const fn = () => 1;
    expect(toStoredValue({ a: undefined, b: fn, c: [1, undefined, fn, { d: undefined }], e: { f: null, g: 'x', h: true, i: 2.5 } }))
      .toEqual({ a: null, c: [1, null, null, { d: null }], e: { f: null, g: 'x', h: true, i: 2.5 } });
    expect(toStoredValue(undefined)).toBeNull();
  });

  it('copies dates and sub-documents instead of sharing them', () => {
    const at = new Date(1_700_000_000_000);
    const doc = { at, nested: { list: [at] } };
    const stored = toStoredValue(doc) as { at: Date; nested: { list: Date[] } };
    expect(stored).toEqual(doc);
    expect(stored.at).not.toBe(at);
    expect(stored.nested).not.toBe(doc.nested);
    expect(stored.nested.list[0]).not.toBe(at);
  });

  it.each<[string, unknown, string]>([
    ['NaN in an array in a sub-document', { a: { b: [1, Number.NaN] } }, "Cannot store non-finite number at 'a.b.1'"],
    ['Infinity at the top', { total: Infinity }, "Cannot store non-finite number at 'total'"],
    ['a bigint', { a: { n: 10n } }, "Cannot store a value of type bigint at 'a.n'"],
    ['a symbol in an array', { tags: [Symbol('x')] }, "Cannot store a value of type symbol at 'tags.0'"],
    ['a Map', { a: [{ m: new Map() }] }, "Cannot store a Map at 'a.0.m'"],
    ['binary', { blob: Buffer.from('x') }, "Cannot store a Buffer at 'blob'"],
  ])('refuses %s, naming its path', (_, doc, message) => {
    expect(() => toStoredValue(doc)).toThrow(new TypeError(message));
  });
});

describe('embedded JSON codec', () => {
  it('writes a document without dates as plain JSON', () => {
    const doc: PlainObject = { _id: 'a', n: 1, s: 'q"uote', list: [{ x: null }], sub: { y: false } };
    expect(encodeDoc(doc)).toBe(JSON.stringify(doc));
    expect(decodeDoc(encodeDoc(doc), 'test')).toEqual(doc);
  });

  it('round-trips dates at any depth, in arrays too', () => {
    const doc: PlainObject = { _id: 'a', at: new Date(1), deep: { list: [{ when: new Date(2) }, 3] }, text: 'no date here' };
    const text = encodeDoc(doc);
    expect(text).toContain('{"$date":2}');
    const back = decodeDoc(text, 'test');
    expect(back).toEqual(doc);
    expect((back.deep as { list: [{ when: Date }] }).list[0].when).toBeInstanceOf(Date);
  });
});
