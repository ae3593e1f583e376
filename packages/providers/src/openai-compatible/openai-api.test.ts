import { openAIChatChunkSchema, openAIChatResponseSchema, openAIErrorSchema } from './openai-api';
import { parseOpenAIError } from './openai-error';
import * as recorded from './fixtures/recorded-openai-shapes';

describe('OpenAI wire schemas accept recorded shapes', () => {
  it.each([
    ['text response', recorded.textResponse],
    ['tool call response', recorded.toolCallResponse],
  ])('%s', (_name, body) => {
    expect(openAIChatResponseSchema.safeParse(body).success).toBe(true);
  });

  it.each([
    ...recorded.textStreamChunks.map((c, i) => [`text stream chunk ${i}`, c] as const),
    ...recorded.toolCallStreamChunks.map((c, i) => [`tool call stream chunk ${i}`, c] as const),
    ['azure prompt filter chunk', recorded.azurePromptFilterChunk] as const,
  ])('%s', (_name, chunk) => {
    expect(openAIChatChunkSchema.safeParse(chunk).success).toBe(true);
  });

  it.each([
    ['context length', recorded.contextLengthErrorBody],
    ['invalid key', recorded.invalidApiKeyErrorBody],
    ['insufficient quota', recorded.insufficientQuotaErrorBody],
    ['rate limit', recorded.rateLimitErrorBody],
    ['server error', recorded.serverErrorBody],
  ])('%s error body', (_name, body) => {
    expect(openAIErrorSchema.safeParse(body).success).toBe(true);
  });

  it('keeps unknown fields', () => {
    const parsed = openAIChatChunkSchema.parse(recorded.textStreamChunks[1]);
    expect(parsed).toHaveProperty('obfuscation', 'x');
  });

  it.each([
    ['choices not an array', { ...recorded.textStreamChunks[0], choices: 'x' }],
    ['no id', { ...recorded.textStreamChunks[0], id: undefined }],
    ['content not a string', { ...recorded.textStreamChunks[0], choices: [{ index: 0, delta: { content: 5 }, finish_reason: null }] }],
  ])('rejects a chunk with %s', (_name, chunk) => {
    expect(openAIChatChunkSchema.safeParse(chunk).success).toBe(false);
  });
});

describe('parseOpenAIError', () => {
  it.each([
    ['an OpenAI error body', JSON.stringify(recorded.contextLengthErrorBody), { message: recorded.contextLengthErrorBody.error.message, param: 'messages', code: 'context_length_exceeded' }],
    ['an already parsed body', recorded.serverErrorBody, { message: recorded.serverErrorBody.error.message, param: null, code: null }],
    ['a numeric code', '{"error":{"message":"m","code":429}}', { message: 'm', param: null, code: '429' }],
    ['HTML', '<html>502 Bad Gateway</html>', {}],
    ['an empty body', '', {}],
    ['JSON of another shape', '{"detail":"nope"}', {}],
  ])('reads %s', (_name, body, expected) => {
    expect(parseOpenAIError(body)).toEqual(expected);
  });
});
