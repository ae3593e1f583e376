import { createNativeBatchProvider, hasNativeBatchAdapter } from './create-native-batch-provider';

describe('createNativeBatchProvider', () => {
  it.each(['openai-compatible'])('creates the %s batch adapter', async (kind) => {
    const provider = createNativeBatchProvider(kind);
    expect(provider.kind).toBe(kind);
    expect(hasNativeBatchAdapter(kind)).toBe(true);
    await provider.close?.();
  });

  it.each(['azure-openai', 'gemini'])('reports that %s has no batch adapter instead of guessing one', (kind) => {
    expect(hasNativeBatchAdapter(kind)).toBe(false);
    expect(() => createNativeBatchProvider(kind)).toThrow(/has no native batch adapter/);
  });

  it.each(['', 'OpenAI-Compatible', 'cohere'])('throws on unknown kind %j', (kind) => {
    expect(() => createNativeBatchProvider(kind)).toThrow(/Unknown chat provider kind/);
    expect(() => hasNativeBatchAdapter(kind)).toThrow(/Unknown chat provider kind/);
  });
});
