import { createChatProvider } from './create-chat-provider';

describe('createChatProvider', () => {
  it('creates the openai-compatible provider', async () => {
    const provider = createChatProvider('openai-compatible');
    expect(provider.kind).toBe('openai-compatible');
    await provider.close?.();
  });

  it.each(['anthropic', 'gemini', '', 'OpenAI-Compatible'])('throws on unknown kind %j', (kind) => {
    expect(() => createChatProvider(kind)).toThrow(/Unknown chat provider kind/);
  });
});
