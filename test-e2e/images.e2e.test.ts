import { toFile } from 'openai';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest } from './harness/api';
import {
  E2E_IMAGE_FALLBACK_MODEL, E2E_IMAGE_MODEL, E2E_IMAGE_PARTIAL_FAILURE_MODEL, E2E_IMAGE_REJECTED_MODEL,
} from './harness/media-catalog';
import { useStack, type StackMode } from './harness/stack';

jest.setTimeout(120_000);

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
const OTHER = 'acct_e2e_images_other';

describe.each<StackMode>(['embedded', 'processes'])('images through the edge (%s)', (mode) => {
  const stack = useStack(mode, { accounts: [{ id: OTHER, credit_usd: '5' }] });
  const call = (method: string, p: string, body?: unknown, key = stack.key, headers: Record<string, string> = {}) => api(stack.baseURL, method, p, { key, body, headers });

  it('is ready; a signed media link is its own credential (a forged one is refused without a key); the image API needs a key', async () => {
    if (stack.processes) expect((await stack.processes.readiness('media')).status).toBe(200);
    expectEnvelope(await api(stack.baseURL, 'GET', '/media/signed/eyJrIjoieCJ9.forged'), 403);
    expectEnvelope(await api(stack.baseURL, 'GET', '/images'), 401);
  });

  it('the catalogue lists image models with their modalities and every field they take', async () => {
    const model = await stack.openai.models.retrieve(E2E_IMAGE_MODEL) as unknown as Record<string, unknown>;
    expect(model).toMatchObject({
      id: E2E_IMAGE_MODEL, architecture: { input_modalities: ['text', 'image'], output_modalities: ['image'] },
      supported_parameters: expect.arrayContaining(['n', 'size', 'mask', 'images', 'partial_images', 'seed']),
      parameter_schema: expect.objectContaining({ n: { type: 'integer', options: null, default: null, min: 1, max: 4 } }),
    });
    expectEnvelope(await call('POST', '/chat/completions', { model: E2E_IMAGE_MODEL, messages: [{ role: 'user', content: 'hi' }] }), 400, 'unsupported_api', 'model');
  });

  it('generate (openai client): a url per image, each stored as a record, downloadable through its signed url and by id; billed per image', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const res = await stack.openai.images.generate({ model: E2E_IMAGE_MODEL, prompt: 'a red fox in snow', n: 2, size: '1024x1024', metadata: { project: 'atlas' } } as never).withResponse();
    const result = res.data;
    expect(result.data).toHaveLength(2);
    expect(result.usage).toMatchObject({ generated_images: 2 });
    for (const item of result.data!) {
      expect(item).toMatchObject({ url: expect.stringContaining('/v1/media/signed/'), output_format: 'png', error: null });
      // The signed link needs no key.
      const fetched = await fetch(item.url!);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await fetched.arrayBuffer()).subarray(0, 4)).toEqual(PNG_MAGIC);
    }
    const ids = result.data!.map((d) => (d as { id?: string }).id!);
    const requestId = res.response.headers.get('x-request-id')!;
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    expect(record).toMatchObject({ api_type: 'image', usage: { generated_images: 2 }, list_cost: '0.080000' });
    // The billing lookup finds the call by each image record id and by the provider's id too.
    for (const id of [...ids, record.id]) expect((await call('GET', `/billing/requests/${encodeURIComponent(id)}`)).body.data.request_id).toBe(requestId);
    expect(before - await spendableMicros(stack.baseURL, stack.key)).toBe(80_000);

    // The caller's metadata is kept on each image record.
    for (const id of ids) expect((await call('GET', `/images/${id}`)).body).toMatchObject({ id, metadata: { project: 'atlas' } });
    const content = await call('GET', `/images/${ids[0]}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-disposition')).toContain(`${ids[0]}.png`);
    const part = await fetch(`${stack.baseURL}/images/${ids[0]}/content`, { headers: { authorization: `Bearer ${stack.key}`, range: 'bytes=0-3' } });
    expect({ status: part.status, range: part.headers.get('content-range') }).toEqual({ status: 206, range: expect.stringMatching(/^bytes 0-3\/\d+$/) });
    expect(Buffer.from(await part.arrayBuffer()).equals(PNG_MAGIC)).toBe(true);
  });

  it('an image record keeps the whole prompt, as long as the request could send it', async () => {
    const prompt = `a fox ${'in deep snow '.repeat(500)}`.trim();
    const result = await stack.openai.images.generate({ model: E2E_IMAGE_MODEL, prompt });
    const id = (result.data![0] as { id?: string }).id!;
    expect((await call('GET', `/images/${id}`)).body.prompt).toBe(prompt);
  });

  it('b64_json, per-image failures in data[].error, and the request still answered', async () => {
    const b64 = await stack.openai.images.generate({ model: E2E_IMAGE_MODEL, prompt: 'a blue square', response_format: 'b64_json' });
    expect(Buffer.from(b64.data![0].b64_json!, 'base64').subarray(0, 4)).toEqual(PNG_MAGIC);
    const partial = await call('POST', '/images/generations', { model: E2E_IMAGE_PARTIAL_FAILURE_MODEL, prompt: 'two tries', n: 2 });
    expect(partial.status).toBe(200);
    expect(partial.body.data[0]).toMatchObject({ url: expect.any(String), error: null });
    expect(partial.body.data[1]).toMatchObject({ error: { code: 'content_policy_violation', message: expect.any(String) } });
    expect(partial.body.usage.generated_images).toBe(1);
    const billed = await waitForBilledRequest(stack.baseURL, stack.key, partial.headers.get('x-request-id')!);
    expect(billed.list_cost).toBe('0.040000');
  });

  it('edit (openai client, multipart image + mask), list with cursors, delete', async () => {
    const png = (await stack.openai.images.generate({ model: E2E_IMAGE_MODEL, prompt: 'base', response_format: 'b64_json' })).data![0].b64_json!;
    const bytes = Buffer.from(png, 'base64');
    const edited = await stack.openai.images.edit({
      model: E2E_IMAGE_MODEL, prompt: 'add a hat',
      image: await toFile(bytes, 'in.png', { type: 'image/png' }), mask: await toFile(bytes, 'mask.png', { type: 'image/png' }),
    });
    expect(edited.data![0].url).toContain('/v1/media/signed/');
    expect(edited.usage).toMatchObject({ generated_images: 1, input_images: 1 });

    const first = await call('GET', '/images?limit=2');
    expect(first.body).toMatchObject({ object: 'list', has_more: true, data: [expect.objectContaining({ object: 'image', asset: expect.stringMatching(/^asset:\/\/img_/) }), expect.anything()] });
    const next = await call('GET', `/images?limit=2&after=${first.body.last_id}`);
    expect(next.body.data[0].created_at).toBeLessThanOrEqual(first.body.data[1].created_at);
    expect(next.body.data.map((d: { id: string }) => d.id)).not.toContain(first.body.data[0].id);

    const id = first.body.data[0].id;
    expect((await call('GET', `/images/${id}`, undefined, stack.accountKeys[OTHER])).status).toBe(404);
    expect((await call('DELETE', `/images/${id}`, undefined, stack.accountKeys[OTHER])).status).toBe(404);
    expect((await call('DELETE', `/images/${id}`)).body).toEqual({ id, object: 'image.deleted', deleted: true });
    expectEnvelope(await call('GET', `/images/${id}/content`), 404, 'image_not_found');
  });

  // Before, a file part named __proto__ ended the media process (the whole gateway in single-process mode); a
  // text field so named vanished, and one named constructor was "a function Object()".
  it.each([
    ['a file part named __proto__', (form: FormData) => form.append('__proto__', new Blob([PNG_MAGIC], { type: 'image/png' }), 'x.png'), '__proto__'],
    ['a text field named __proto__', (form: FormData) => form.append('__proto__', '1'), '__proto__'],
    ['a text field named constructor', (form: FormData) => form.append('constructor', '1'), 'constructor'],
  ])('an edit with %s is a 400 naming it, sent nowhere, and the gateway serves on', async (_what, add, param) => {
    const form = new FormData();
    form.append('model', E2E_IMAGE_MODEL);
    form.append('prompt', 'x');
    form.append('image', new Blob([PNG_MAGIC], { type: 'image/png' }), 'a.png');
    add(form);
    const upstream = await stack.simulatorRequestCount();
    const res = await fetch(`${stack.baseURL}/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${stack.key}` }, body: form });
    expectEnvelope({ status: res.status, headers: res.headers, body: await res.json() }, 400, 'unknown_parameter', param);
    expectEnvelope(await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'x', [param]: 1 }), 400, 'unknown_parameter', param);
    expect(await stack.simulatorRequestCount()).toBe(upstream);
    expect((await call('GET', '/images?limit=1')).status).toBe(200);
  });

  it('edits by asset reference; another account cannot use the asset', async () => {
    const gen = await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'source' });
    const asset = `asset://${gen.body.data[0].id}`;
    const edit = await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'edit it', images: [asset], mask: asset });
    expect(edit.status).toBe(200);
    expectEnvelope(await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'steal', images: [asset] }, stack.accountKeys[OTHER]), 400, 'asset_not_found', 'images[0]');
  });

  it('native params: the supplier body with an asset reference replaced by a signed URL; refused for another account', async () => {
    const gen = await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'native source' });
    const asset = `asset://${gen.body.data[0].id}`;
    const native = await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'native call', n: 1, quality: 'high', reference: { image_url: asset } }, stack.key, { 'svc-native-params': 'true' });
    expect(native.status).toBe(200);
    // The provider's own answer, as it came (b64 images and its usage).
    expect(native.body).toMatchObject({ created: expect.any(Number), data: [{ b64_json: expect.any(String) }], usage: expect.any(Object) });
    const billed = await waitForBilledRequest(stack.baseURL, stack.key, native.headers.get('x-request-id')!);
    expect(billed).toMatchObject({ api_type: 'image', usage: { generated_images: 1 } });
    expectEnvelope(await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'x', reference: { image_url: asset } }, stack.accountKeys[OTHER], { 'svc-native-params': 'true' }), 400, 'asset_not_found', 'reference.image_url');
    expectEnvelope(await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'x' }, stack.key, { 'svc-native-params': 'maybe' }), 400, 'invalid_value', 'Svc-Native-Params');
  });

  // Before, the native body's asset walk recursed into any depth: 100,000 levels were a 500.
  it('a native body nested past the JSON bound, or holding 1e400, is a 400 naming its field, sent nowhere', async () => {
    const upstream = await stack.simulatorRequestCount();
    const deep = `{"model":"${E2E_IMAGE_MODEL}","prompt":"x","reference":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`;
    const headers = { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json', 'svc-native-params': 'true' };
    for (const [body, param] of [[deep, 'reference'], [`{"model":"${E2E_IMAGE_MODEL}","prompt":"x","quality":1e400}`, 'quality']]) {
      const res = await fetch(`${stack.baseURL}/images/generations`, { method: 'POST', headers, body });
      expectEnvelope({ status: res.status, headers: res.headers, body: await res.json() }, 400, 'invalid_request', param);
    }
    expect(await stack.simulatorRequestCount()).toBe(upstream);
  });

  it('streams partial images then each final image (stored), billed per image', async () => {
    const stream = await stack.openai.images.generate({ model: E2E_IMAGE_MODEL, prompt: 'streamed', stream: true, partial_images: 2 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
  });

  it('falls back to the next deployment on a 5xx and bills the one that served', async () => {
    const res = await call('POST', '/images/generations', { model: E2E_IMAGE_FALLBACK_MODEL, prompt: 'fallback' });
    expect(res.status).toBe(200);
    expect((await waitForBilledRequest(stack.baseURL, stack.key, res.headers.get('x-request-id')!)).list_cost).toBe('0.040000');
  });

  it.each([
    [{ prompt: 'no model' }, 400, 'model'],
    [{ model: 'e2e/nope', prompt: 'x' }, 404, 'model'],
    [{ model: 'e2e/echo-chat', prompt: 'x' }, 400, 'model'],
    [{ model: E2E_IMAGE_MODEL }, 400, 'prompt'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', n: 9 }, 400, 'n'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', n: '2' }, 400, 'n'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', size: '3x3' }, 400, 'size'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', negative_prompt: 'blur' }, 400, 'negative_prompt'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', seed: 7 }, 400, 'seed'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', colour: 'red' }, 400, 'colour'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', mask: 'data:image/png;base64,iVBORw0KGgo=' }, 400, 'mask'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', images: ['http://169.254.169.254/latest/meta-data'] }, 400, 'images[0]'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', images: ['asset://img_unknown'] }, 400, 'images[0]'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', images: ['data:text/plain;base64,aGk='] }, 400, 'images[0]'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', metadata: { note: 'v'.repeat(513) } }, 400, 'metadata.note'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', metadata: { a: { b: 'c' } } }, 400, 'metadata.a'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x'.repeat(32_001) }, 400, 'prompt'],
    [{ model: E2E_IMAGE_MODEL, prompt: 'x', user: 'u'.repeat(257) }, 400, 'user'],
  ])('%j is refused with %i naming the param, never sent upstream', async (body, status, param) => {
    const upstream = await stack.simulatorRequestCount();
    const res = await call('POST', '/images/generations', body);
    expectEnvelope(res, status, undefined, param);
    expect(await stack.simulatorRequestCount()).toBe(upstream);
  });

  it('a provider refusal is a 400 and nothing is billed; a broke account is refused before the provider', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    expectEnvelope(await call('POST', '/images/generations', { model: E2E_IMAGE_REJECTED_MODEL, prompt: 'x' }), 400);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before);
    const upstream = await stack.simulatorRequestCount();
    expectEnvelope(await call('POST', '/images/generations', { model: E2E_IMAGE_MODEL, prompt: 'x' }, stack.brokeKey), 402);
    expect(await stack.simulatorRequestCount()).toBe(upstream);
  });
});
