import { catalogSchema } from '@gw/catalog';
import { checkFields, MAX_ID_FIELD_CHARS, MAX_TEXT_FIELD_CHARS, routesHonouring } from './request-fields';

const model = catalogSchema.parse({
  providers: { p: { kind: 'openai-compatible', base_url: 'http://p/v1' } },
  models: [{
    id: 'm/image', name: 'm', owned_by: 'o', updated_at: '2026-01-01', media: 'image',
    architecture: { input_modalities: ['text'], output_modalities: ['image'] },
    parameter_schema: {
      n: { type: 'integer', min: 1, max: 4 },
      size: { type: 'string', options: ['1024x1024', '1536x1024'] },
      strength: { type: 'number', min: 0, max: 1 },
      images: { type: 'array', max_items: 2 },
      watermark: { type: 'boolean' },
      granularities: { type: 'array', options: ['word', 'segment'], max_items: 2 },
      user: { type: 'string', max: 8 },
      negative_prompt: { type: 'string' },
      mask: { type: 'string' },
      prompt: { type: 'string', max: 16 },
      uid: { type: 'string' },
    },
    deployments: [{ id: 'd', provider: 'p', provider_model: 'x', price: { prompt_per_million: '0', completion_per_million: '0' } }],
  }],
}).models[0];

const TABLE = {
  model: 'string', prompt: 'string', n: 'integer', size: 'string', strength: 'number', images: 'array', watermark: 'boolean', seed: 'integer',
  granularities: 'array', user: 'id', negative_prompt: 'string', mask: 'data', uid: 'id',
} as const;

describe('checkFields: the endpoint table, then the model parameter_schema, each failure a 400 naming the field', () => {
  it.each([
    [{ n: 2, size: '1024x1024', strength: 0.5, images: ['a'], watermark: false }, null],
    [{ colour: 'red' }, ['colour', 'unknown_parameter']],
    [{ n: 'two' }, ['n', 'invalid_type']],
    [{ n: 1.5 }, ['n', 'invalid_type']],
    [{ n: 5 }, ['n', 'invalid_value']],
    [{ n: 0 }, ['n', 'invalid_value']],
    [{ size: '10x10' }, ['size', 'invalid_value']],
    [{ strength: 1.01 }, ['strength', 'invalid_value']],
    [{ images: ['a', 'b', 'c'] }, ['images', 'invalid_value']],
    [{ images: 'a' }, ['images', 'invalid_type']],
    [{ watermark: 'yes' }, ['watermark', 'invalid_type']],
    [{ seed: 7 }, ['seed', 'unsupported_parameter']],
    // An array's options bound each item.
    [{ granularities: ['segment', 'word'] }, null],
    [{ granularities: ['segment', 'zzz'] }, ['granularities', 'invalid_value']],
    [{ granularities: [{ deep: ['x'] }] }, ['granularities', 'invalid_value']],
    [{ granularities: ['word', 'word', 'word'] }, ['granularities', 'invalid_value']],
    // Free text is bounded: by the model's max characters, else by the gateway's own bound; inline data is not.
    [{ user: 'u'.repeat(8) }, null],
    [{ user: 'u'.repeat(9) }, ['user', 'invalid_value']],
    [{ negative_prompt: 'x'.repeat(MAX_TEXT_FIELD_CHARS) }, null],
    [{ negative_prompt: 'x'.repeat(MAX_TEXT_FIELD_CHARS + 1) }, ['negative_prompt', 'invalid_value']],
    // A field every model takes is still held to the bound the model gives it.
    [{ prompt: 'p'.repeat(16) }, null],
    [{ prompt: 'p'.repeat(17) }, ['prompt', 'invalid_value']],
    [{ mask: 'A'.repeat(MAX_TEXT_FIELD_CHARS + 1) }, null],
    [{ uid: 'u'.repeat(MAX_ID_FIELD_CHARS) }, null],
    [{ uid: 'u'.repeat(MAX_ID_FIELD_CHARS + 1) }, ['uid', 'invalid_value']],
    [{ uid: 7 }, ['uid', 'invalid_type']],
    [{ mask: 5 }, ['mask', 'invalid_type']],
    // An object or array field is held to the JSON bounds (it is serialized for the provider).
    [{ images: [JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`)] }, ['images', 'invalid_request']],
    [{ images: [JSON.parse('1e400')] }, ['images', 'invalid_request']],
  ])('%s', (fields, refusal) => {
    const run = () => checkFields({ model: 'm/image', prompt: 'p', ...fields }, TABLE, model, ['model', 'prompt']);
    if (!refusal) expect(run).not.toThrow();
    else expect(run).toThrow(expect.objectContaining({ status: 400, param: refusal[0], code: refusal[1] }));
  });
});

describe('routesHonouring: only routes honouring every set field; none is a 400 naming a field no route honours', () => {
  const routes = [{ id: 'a', fields: ['n', 'size'] }, { id: 'b', fields: ['n', 'seed'] }];
  it.each([
    [['n'], ['a', 'b']],
    [['n', 'size'], ['a']],
    [['seed'], ['b']],
    [[], ['a', 'b']],
  ])('%j -> %j', (set, ids) => {
    expect(routesHonouring(routes, set, (r) => r.fields).map((r) => r.id)).toEqual(ids);
  });
  it('a field no route honours is named; fields no single route honours together name the first', () => {
    expect(() => routesHonouring(routes, ['n', 'mask'], (r) => r.fields)).toThrow(expect.objectContaining({ param: 'mask', code: 'unsupported_parameter' }));
    expect(() => routesHonouring(routes, ['size', 'seed'], (r) => r.fields)).toThrow(expect.objectContaining({ param: 'size' }));
  });
});
