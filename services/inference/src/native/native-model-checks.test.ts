import { modelSchema } from '@gw/catalog';
import { checkMessagesForModel, checkResponsesForModel } from './native-model-checks';

const model = (inputs: string[]) => modelSchema.parse({
  id: 'vendor/m', name: 'm', owned_by: 't', updated_at: '2026-01-01', context_length: 5000,
  architecture: { input_modalities: inputs, output_modalities: ['text'] },
  per_request_limits: { prompt_tokens: 4000, completion_tokens: 2000 },
  deployments: [{ id: 'd', provider: 'p', provider_model: 'x', price: { prompt_per_million: '1', completion_per_million: '1' } }],
});
const TEXT = model(['text']);
const VISION = model(['text', 'image']);
const words = (n: number) => Array.from({ length: n }, () => 'word').join(' ');
const errorOf = (fn: () => void) => { try { fn(); return null; } catch (e) { return e; } };

describe('responses input checked against the model', () => {
  const withPart = (part: object) => ({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_text', text: 'look' }, part] }] });
  const p = 'input[0].content[1]';
  it.each<[string, object, typeof TEXT, string]>([
    ['an image on a text-only model', withPart({ type: 'input_image', image_url: 'https://x/y.png' }), TEXT, `${p}.type`],
    ['a file on a model without file input', withPart({ type: 'input_file', file_data: 'data:application/pdf;base64,aGk=' }), VISION, `${p}.type`],
    ['an unknown image file_id', withPart({ type: 'input_image', file_id: 'file-1' }), VISION, `${p}.file_id`],
    ['a malformed image URL', withPart({ type: 'input_image', image_url: 'javascript:alert(1)' }), VISION, `${p}.image_url`],
    ['a data URL that is not base64', withPart({ type: 'input_image', image_url: 'data:image/png;base64,??' }), VISION, `${p}.image_url`],
    ['include of input image URLs on a text-only model', { model: 'm', input: 'x', include: ['message.input_image.image_url'] }, TEXT, 'include[0]'],
    ['a prompt over the prompt limit', { model: 'm', input: words(9192) }, VISION, 'input'],
    ['instructions plus input over the prompt limit', { model: 'm', instructions: words(2500), input: words(2500) }, VISION, 'input'],
    ['prompt plus max_output_tokens over the context', { model: 'm', input: words(3500), max_output_tokens: 2000 }, VISION, 'max_output_tokens'],
  ])('%s', (_what, body, m, param) => {
    expect(errorOf(() => checkResponsesForModel(body as never, m))).toMatchObject({ status: 400, param });
  });

  it('passes an image the model can take and a prompt within its limits', () => {
    expect(errorOf(() => checkResponsesForModel(withPart({ type: 'input_image', image_url: 'data:image/jpeg;base64,/9j/4AAQ' }) as never, VISION))).toBeNull();
    expect(errorOf(() => checkResponsesForModel({ model: 'm', input: words(3000), max_output_tokens: 1000 }, VISION))).toBeNull();
  });
});

describe('messages input checked against the model', () => {
  const withBlock = (block: object) => ({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, block] }] });
  const p = 'messages[0].content[1]';
  it.each<[string, object, typeof TEXT, string]>([
    ['an image on a text-only model', withBlock({ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }), TEXT, `${p}.type`],
    ['a document on a model without file input', withBlock({ type: 'document', source: { type: 'text', data: 'x' } }), VISION, `${p}.type`],
    ['an unknown file_id', withBlock({ type: 'image', source: { type: 'file', file_id: 'file_1' } }), VISION, `${p}.source.file_id`],
    ['an image URL that is not http(s)', withBlock({ type: 'image', source: { type: 'url', url: 'file:///etc/passwd' } }), VISION, `${p}.source.url`],
    ['base64 data that is not base64', withBlock({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'not base64' } }), VISION, `${p}.source.data`],
    ['a prompt over the prompt limit', { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: words(9192) }] }, VISION, 'messages'],
    ['a system prompt over the prompt limit', { model: 'm', max_tokens: 10, system: words(5000), messages: [{ role: 'user', content: 'hi' }] }, VISION, 'messages'],
    ['prompt plus max_tokens over the context', { model: 'm', max_tokens: 2000, messages: [{ role: 'user', content: words(3500) }] }, VISION, 'max_tokens'],
  ])('%s', (_what, body, m, param) => {
    expect(errorOf(() => checkMessagesForModel(body as never, m))).toMatchObject({ status: 400, param });
  });

  it('passes a base64 image the model can take', () => {
    const body = withBlock({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } });
    expect(errorOf(() => checkMessagesForModel(body as never, VISION))).toBeNull();
  });
});
