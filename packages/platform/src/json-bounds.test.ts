import { checkBodyDepth, checkFreeForm, JSON_BOUNDS } from './json-bounds';

const nested = (levels: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? { a: v } : [v];
  return v;
};
const errorOf = (fn: () => void) => { try { fn(); return null; } catch (e) { return e; } };

describe('JSON bounds', () => {
  it('takes exactly maxDepth levels of objects and arrays, and refuses one more', () => {
    expect(errorOf(() => checkFreeForm(nested(JSON_BOUNDS.maxDepth), 'extra_body'))).toBeNull();
    expect(errorOf(() => checkFreeForm(nested(JSON_BOUNDS.maxDepth + 1), 'extra_body'))).toMatchObject({ status: 400, param: 'extra_body' });
  });

  it('walks 100,000 levels without overflowing the stack', () => {
    expect(errorOf(() => checkBodyDepth({ model: 'm', extra: nested(100_000) }))).toMatchObject({ status: 400, param: 'extra' });
  });

  it('counts keys and items over the whole object', () => {
    const wide = { a: Array.from({ length: JSON_BOUNDS.maxMembers / 2 }, (_, i) => i), b: Object.fromEntries(Array.from({ length: JSON_BOUNDS.maxMembers / 2 - 2 }, (_, i) => [`k${i}`, i])) };
    expect(errorOf(() => checkFreeForm(wide, 'metadata'))).toBeNull();
    expect(errorOf(() => checkFreeForm({ ...wide, c: 1, d: 2 }, 'metadata'))).toMatchObject({ status: 400, param: 'metadata' });
  });

  it('bounds only depth for the body as a whole (a long conversation is not free-form)', () => {
    const messages = Array.from({ length: 10_000 }, () => ({ role: 'user', content: 'hi' }));
    expect(errorOf(() => checkBodyDepth({ messages }))).toBeNull();
  });

  it('refuses a number JSON cannot carry (1e400 parses as Infinity), at the top level or inside, naming the field', () => {
    const body = JSON.parse('{"n":1,"a":{"b":[2,-1e400]},"c":1e400}') as Record<string, unknown>;
    expect(errorOf(() => checkBodyDepth({ n: body.n, a: body.a }))).toMatchObject({ status: 400, param: 'a', message: 'a holds a number too large for JSON (such as 1e400)' });
    expect(errorOf(() => checkBodyDepth({ n: body.n, c: body.c }))).toMatchObject({ status: 400, param: 'c' });
    expect(errorOf(() => checkFreeForm(body.a, 'extra_body'))).toMatchObject({ status: 400, param: 'extra_body' });
    expect(errorOf(() => checkBodyDepth({ n: 1e308, a: { b: -1e308 } }))).toBeNull();
  });
});
