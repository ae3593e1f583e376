import { createChatProvider } from './create-chat-provider';

describe('createChatProvider', () => {
  it.each(['openai-compatible', 'azure-openai', 'anthropic', 'gemini'])('creates the %s provider', async (kind) => {
    const provider = createChatProvider(kind);
    expect(provider.kind).toBe(kind);
    await provider.close?.();
  });

  it.each(['', 'OpenAI-Compatible', 'cohere'])('throws on unknown kind %j', (kind) => {
    expect(() => createChatProvider(kind)).toThrow(/Unknown chat provider kind/);
  });
});
