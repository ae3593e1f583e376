import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

describe('the idempotency key of a call', () => {
  let server: Server;
  let seen: IncomingHttpHeaders[];

  beforeAll(async () => {
    seen = [];
    // An upstream that records what it was sent and refuses the call: only the request matters here.
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"recorded"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it.each<[string, string | undefined]>([
    ['openai-compatible', 'job-key'],
    ['azure-openai', undefined],
    ['anthropic', undefined],
    ['gemini', undefined],
  ])('%s sends Idempotency-Key: %s', async (kind, expected) => {
    const provider = createChatProvider(kind);
    seen.length = 0;
    try {
      const target = {
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'k', providerModel: 'm',
        apiVersion: '2024-10-21', timeoutMs: 5_000, idempotencyKey: 'job-key',
      };
      await expect(provider.chat({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }, target)).rejects.toBeDefined();
      expect(seen).toHaveLength(1);
      expect(seen[0]['idempotency-key']).toBe(expected);
    } finally {
      await provider.close?.();
    }
  });
});
