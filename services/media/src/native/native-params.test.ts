import { resolveAssets, wantsNativeParams } from './native-params';

describe('resolveAssets: every asset:// string at any depth, checked and replaced; everything else untouched', () => {
  const resolve = async (ref: string, param: string) => {
    if (ref === 'asset://img_foreign') throw Object.assign(new Error('not yours'), { param });
    return `https://gw.example/v1/media/signed/${ref.slice(8)}@${param}`;
  };

  it('replaces references in objects and arrays, naming each by its JSON path', async () => {
    const body = { model: 'm', prompt: 'asset:// is only a prefix when it starts the string', image: 'asset://img_a', refs: [{ url: 'asset://img_b' }, 'https://x/y.png', 3], n: 1, flag: true, none: null };
    expect(await resolveAssets(body, resolve)).toEqual({
      model: 'm', prompt: body.prompt, n: 1, flag: true, none: null,
      image: 'https://gw.example/v1/media/signed/img_a@image',
      refs: [{ url: 'https://gw.example/v1/media/signed/img_b@refs[0].url' }, 'https://x/y.png', 3],
    });
  });

  it('a supplier field named __proto__ is sent as the field it is, its references replaced', async () => {
    const body = JSON.parse('{"__proto__":{"image":"asset://img_p"},"n":1}') as Record<string, unknown>;
    const sent = await resolveAssets(body, resolve);
    expect(Object.getPrototypeOf(sent)).toBe(Object.prototype);
    expect(JSON.stringify(sent)).toBe('{"__proto__":{"image":"https://gw.example/v1/media/signed/img_p@__proto__.image"},"n":1}');
  });

  it('a reference that is not the caller\'s fails the whole body, naming where it was', async () => {
    await expect(resolveAssets({ a: { b: ['asset://img_foreign'] } }, resolve)).rejects.toMatchObject({ param: 'a.b[0]' });
  });

  // Before, the walk recursed into any depth: a body nested 100,000 levels overflowed the stack (a 500).
  it.each([
    ['nested past the JSON bound', { deep: JSON.parse(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`) }, 'deep', /nested more than 32 levels/],
    ['holding a number too large for JSON', JSON.parse('{"quality":1e400}'), 'quality', /too large for JSON/],
  ])('a native body %s is a 400 naming its field', async (_what, body, param, message) => {
    await expect(resolveAssets(body, resolve)).rejects.toMatchObject({ status: 400, param, message: expect.stringMatching(message) });
  });

  it('at most 32 references per body', async () => {
    await expect(resolveAssets({ images: Array.from({ length: 33 }, (_, i) => `asset://img_${i}`) }, resolve)).rejects.toMatchObject({ status: 400, param: 'images[32]', code: 'too_many_assets' });
  });
});

describe('Svc-Native-Params', () => {
  it.each([[undefined, false], ['true', true], ['TRUE', true], ['false', false], [['true'], true]])('%j -> %s', (value, expected) => {
    expect(wantsNativeParams(value as string | undefined)).toBe(expected);
  });
  it('anything else is a 400 naming the header', () => {
    expect(() => wantsNativeParams('yes')).toThrow(expect.objectContaining({ status: 400, param: 'Svc-Native-Params' }));
  });
});
