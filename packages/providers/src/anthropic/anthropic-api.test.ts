import { anthropicErrorSchema, anthropicMessageSchema, anthropicStreamEventSchema } from './anthropic-api';
import { parseAnthropicError } from './anthropic-error';
import * as recorded from './fixtures/recorded-anthropic-shapes';

/** The `data:` payloads of a recorded stream. */
function dataOf(stream: string): unknown[] {
  return stream
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 'data: '.length)));
}

describe('Anthropic wire schemas accept recorded shapes', () => {
  it.each([
    ['text message', recorded.textMessage],
    ['tool use message', recorded.toolUseMessage],
    ['thinking message with a redacted block', recorded.thinkingMessage],
    ['refusal message', recorded.refusalMessage],
  ])('%s', (_name, body) => {
    expect(anthropicMessageSchema.safeParse(body).success).toBe(true);
  });

  it.each([
    ...dataOf(recorded.textStream).map((e, i) => [`text stream event ${i}`, e] as const),
    ...dataOf(recorded.toolUseStream).map((e, i) => [`tool use stream event ${i}`, e] as const),
    ...dataOf(recorded.thinkingStream).map((e, i) => [`thinking stream event ${i}`, e] as const),
  ])('%s', (_name, event) => {
    expect(anthropicStreamEventSchema.safeParse(event).success).toBe(true);
  });

  it.each([
    ['overloaded', recorded.overloadedErrorBody],
    ['invalid request', recorded.invalidRequestErrorBody],
    ['authentication', recorded.authenticationErrorBody],
    ['not found', recorded.notFoundErrorBody],
    ['rate limit', recorded.rateLimitErrorBody],
    ['credit balance', recorded.creditBalanceErrorBody],
    ['api error', recorded.apiErrorBody],
  ])('%s error body', (_name, body) => {
    expect(anthropicErrorSchema.safeParse(body).success).toBe(true);
  });
});

describe('Anthropic wire schemas reject broken known shapes', () => {
  it.each([
    ['a text block without text', { ...recorded.textMessage, content: [{ type: 'text' }] }],
    ['a tool_use block without a name', { ...recorded.textMessage, content: [{ type: 'tool_use', id: 'toolu_1', input: {} }] }],
    ['a message without id', { ...recorded.textMessage, id: undefined }],
  ])('%s', (_name, body) => {
    expect(anthropicMessageSchema.safeParse(body).success).toBe(false);
  });

  it('rejects a text_delta without text', () => {
    expect(anthropicStreamEventSchema.safeParse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta' } }).success).toBe(false);
  });
});

describe('parseAnthropicError', () => {
  it.each([
    ['an error body', JSON.stringify(recorded.overloadedErrorBody), { type: 'overloaded_error', message: 'Overloaded', param: null, code: null }],
    ['an object', recorded.notFoundErrorBody, { type: 'not_found_error', message: 'model: claude-nonexistent', param: null, code: null }],
    ['HTML', '<html>502</html>', {}],
    ['an OpenAI-shaped body without an error object', '{"message":"x"}', {}],
  ])('reads %s', (_name, body, expected) => {
    expect(parseAnthropicError(body)).toEqual(expected);
  });
});
