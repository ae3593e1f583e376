import { parameterBoundViolation } from './parameter-bounds';
import type { ParameterSpec } from './schema';

const spec = (over: Partial<ParameterSpec>): ParameterSpec => ({ type: 'number', options: null, default: null, min: null, max: null, ...over });

describe('parameterBoundViolation', () => {
  it.each<[string, unknown, Partial<ParameterSpec>, string | null]>([
    ['within min and max', 0.5, { min: 0, max: 1 }, null],
    ['below min', -0.1, { min: 0, max: 1 }, 'temperature must be at least 0'],
    ['above max', 1.5, { min: 0, max: 1 }, 'temperature must be at most 1'],
    ['one of the options', 'high', { type: 'string', options: ['low', 'high'] }, null],
    ['not one of the options', 'max', { type: 'string', options: ['low', 'high'] }, 'temperature must be one of "low", "high"'],
    ['an array whose items are all options', ['word', 'segment'], { type: 'array', options: ['word', 'segment'] }, null],
    ['an array with an item outside the options', ['word', 'zzz'], { type: 'array', options: ['word', 'segment'] }, 'each item of temperature must be one of "word", "segment"'],
    ['an array of objects against options', [{ deep: ['x'] }], { type: 'array', options: ['word'] }, 'each item of temperature must be one of "word"'],
    ['an empty array against options', [], { type: 'array', options: ['word'] }, null],
    ['an array over max_items', ['a', 'b', 'c'], { type: 'array', max_items: 2 }, 'temperature takes at most 2 items'],
    ['an array at max_items', ['a', 'b'], { type: 'array', max_items: 2 }, null],
    ['no bounds at all', 'anything', { type: 'string' }, null],
    ['empty options bound nothing', 'anything', { type: 'string', options: [] }, null],
    // A string's min and max bound its length in characters.
    ['a string at max characters', 'abcd', { type: 'string', max: 4 }, null],
    ['a string over max characters', 'abcde', { type: 'string', max: 4 }, 'temperature may have at most 4 characters'],
    ['a string under min characters', 'a', { type: 'string', min: 2 }, 'temperature must have at least 2 characters'],
  ])('%s', (_case, value, bounds, violation) => {
    expect(parameterBoundViolation('temperature', value, spec(bounds))).toBe(violation);
  });
});
