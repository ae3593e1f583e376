import { InputError } from './errors';
import { parseKeyValueMetadata } from './key-value-metadata';

const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));

describe('parseKeyValueMetadata', () => {
  it.each([
    ['absent', undefined, null],
    ['null', null, null],
    ['16 pairs', pairs(16), pairs(16)],
    ['a 64-character key and a 512-character value', { ['k'.repeat(64)]: 'v'.repeat(512) }, { ['k'.repeat(64)]: 'v'.repeat(512) }],
  ])('takes %s', (_, input, expected) => {
    expect(parseKeyValueMetadata(input)).toEqual(expected);
  });

  it.each([
    ['a string', 'x', 'metadata'],
    ['an array', ['a'], 'metadata'],
    ['17 pairs', pairs(17), 'metadata'],
    ['an empty key', { '': 'v' }, 'metadata'],
    // The key is not echoed in the param: it could be of any length.
    ['a 65-character key', { ['k'.repeat(65)]: 'v' }, 'metadata'],
    ['a number value', { a: 1 }, 'metadata.a'],
    ['an object value', { a: { b: 'c' } }, 'metadata.a'],
    ['a 513-character value', { a: 'v'.repeat(513) }, 'metadata.a'],
  ])('refuses %s, naming %s', (_, input, param) => {
    let caught: unknown;
    try {
      parseKeyValueMetadata(input);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InputError);
    expect(caught).toMatchObject({ param });
  });
});
