import { InputError } from '@gw/platform';
import { convertJsonSchemaToGeminiSchema, convertToolParameters } from './convert-json-schema-to-gemini-schema';

describe('convertJsonSchemaToGeminiSchema', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      'drops keywords Gemini rejects, at every depth',
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        additionalProperties: false,
        properties: { tags: { type: 'array', items: { type: 'string', default: 'x', examples: ['a'] }, uniqueItems: true } },
        required: ['tags'],
        strict: true,
      },
      { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } }, required: ['tags'] },
    ],
    [
      'keeps the keywords both share',
      { type: 'string', title: 'T', description: 'd', enum: ['a', 'b'], minLength: 1, maxLength: 9, pattern: '^a' },
      { type: 'string', title: 'T', description: 'd', enum: ['a', 'b'], minLength: 1, maxLength: 9, pattern: '^a' },
    ],
    ['a type list with null becomes nullable', { type: ['string', 'null'] }, { type: 'string', nullable: true }],
    ['a type list without null becomes anyOf', { type: ['string', 'integer'] }, { anyOf: [{ type: 'string' }, { type: 'integer' }] }],
    ['anyOf with null becomes nullable', { anyOf: [{ type: 'integer' }, { type: 'null' }] }, { nullable: true, type: 'integer' }],
    ['oneOf becomes anyOf', { oneOf: [{ type: 'integer' }, { type: 'string' }] }, { anyOf: [{ type: 'integer' }, { type: 'string' }] }],
    ['const becomes a one-value enum', { type: 'string', const: 'fixed' }, { type: 'string', enum: ['fixed'] }],
    [
      'allOf members are merged',
      { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } }, required: ['b'] }] },
      { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a', 'b'] },
    ],
    [
      'local $refs are inlined',
      { type: 'object', properties: { home: { $ref: '#/$defs/Address' }, work: { $ref: '#/definitions/Address' } }, $defs: { Address: { type: 'object', properties: { city: { type: 'string' } } } }, definitions: {} },
      { type: 'object', properties: { home: { type: 'object', properties: { city: { type: 'string' } } }, work: { type: 'object', properties: { city: { type: 'string' } } } } },
    ],
    ['formats Gemini supports are kept', { type: 'string', format: 'date-time' }, { type: 'string', format: 'date-time' }],
    ['other formats are dropped', { type: 'string', format: 'uri' }, { type: 'string' }],
    ['number formats', { type: 'number', format: 'double' }, { type: 'number', format: 'double' }],
    ['properties without a type are an object', { properties: { a: { type: 'boolean' } } }, { type: 'object', properties: { a: { type: 'boolean' } } }],
    ['empty properties are left out', { type: 'object', properties: {} }, { type: 'object' }],
    ['tuple items take the first schema', { type: 'array', items: [{ type: 'string' }, { type: 'number' }] }, { type: 'array', items: { type: 'string' } }],
  ];

  it.each(cases)('%s', (_name, schema, expected) => {
    expect(convertJsonSchemaToGeminiSchema(schema, 'p')).toEqual(expected);
  });

  it('a $ref to a definition named like an object member, which the schema does not have, is unresolved', () => {
    const schema = { type: 'object', properties: { a: { $ref: '#/$defs/constructor' } }, $defs: {} };
    expect(() => convertJsonSchemaToGeminiSchema(schema, 'p')).toThrow('Schema reference #/$defs/constructor cannot be resolved');
  });

  it('keeps a property named __proto__ as a property', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"type":"integer"}}}') as Record<string, unknown>;
    const converted = convertJsonSchemaToGeminiSchema(schema, 'p');
    expect(JSON.stringify(converted)).toBe('{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"type":"integer"}}}');
  });

  it.each([
    ['a recursive $ref', { type: 'object', properties: { child: { $ref: '#/$defs/Node' } }, $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } } }],
    ['a remote $ref', { $ref: 'https://example.com/schema.json' }],
    ['a schema that is not an object', 'string' as unknown as Record<string, unknown>],
  ])('rejects %s naming the param', (_name, schema) => {
    expect(() => convertJsonSchemaToGeminiSchema(schema, 'tools[0].function.parameters')).toThrow(InputError);
    try {
      convertJsonSchemaToGeminiSchema(schema, 'tools[0].function.parameters');
    } catch (err) {
      expect(err).toMatchObject({ param: 'tools[0].function.parameters' });
    }
  });
});

describe('convertToolParameters', () => {
  it.each([
    ['no schema', undefined, undefined],
    ['an object without properties', { type: 'object', properties: {}, additionalProperties: false }, undefined],
    ['an object with properties', { type: 'object', properties: { q: { type: 'string' } } }, { type: 'object', properties: { q: { type: 'string' } } }],
  ])('%s', (_name, schema, expected) => {
    expect(convertToolParameters(schema, 'p')).toEqual(expected);
  });
});
