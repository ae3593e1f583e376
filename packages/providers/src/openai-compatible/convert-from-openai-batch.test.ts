import { convertOpenAIBatchResultLine, convertOpenAIBatchState } from './convert-from-openai-batch';
import { openAIBatchSchema, openAIFileSchema } from './openai-batch-api';
import * as recorded from './fixtures/recorded-openai-batch-shapes';

const state = (body: object) => convertOpenAIBatchState(openAIBatchSchema.parse(body));

describe('OpenAI batch objects, as recorded, in the normalized state', () => {
  it('reads a file object', () => {
    expect(openAIFileSchema.parse(recorded.batchInputFile).id).toBe(recorded.batchInputFile.id);
  });

  it.each([
    ['validating', recorded.validatingBatch, { status: 'in_progress', upstreamStatus: 'validating', hasResults: false, error: null, counts: { total: 0, succeeded: 0, failed: 0 } }],
    ['in_progress', { ...recorded.validatingBatch, status: 'in_progress' }, { status: 'in_progress', hasResults: false }],
    ['finalizing', { ...recorded.completedBatch, status: 'finalizing' }, { status: 'in_progress', hasResults: false }],
    ['cancelling', recorded.cancellingBatch, { status: 'cancelling', hasResults: false }],
    ['completed', recorded.completedBatch, { status: 'completed', hasResults: true, error: null, counts: { total: 3, succeeded: 2, failed: 1 } }],
    ['expired', recorded.expiredBatch, { status: 'expired', hasResults: true, counts: { total: 3, succeeded: 1, failed: 2 } }],
    ['failed at validation', recorded.failedBatch, { status: 'failed', hasResults: false, error: { code: 'invalid_json_line', message: 'This line is not parseable as valid JSON.' } }],
    ['cancelled before any line ran', { ...recorded.cancellingBatch, status: 'cancelled' }, { status: 'cancelled', hasResults: false }],
  ])('%s', (_name, body, expected) => {
    expect(state(body)).toMatchObject(expected);
  });

  it('reports a status word it does not know as a malformed answer instead of guessing', () => {
    expect(openAIBatchSchema.safeParse({ ...recorded.validatingBatch, status: 'paused' }).success).toBe(false);
  });
});

describe('OpenAI batch result lines, as recorded', () => {
  it('maps an answered line through the chat mapper, with usage and ids', () => {
    expect(convertOpenAIBatchResultLine(JSON.stringify(recorded.answeredLine))).toEqual({
      custom_id: 'line-1',
      outcome: 'succeeded',
      completion: {
        id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG', object: 'chat.completion', created: 1741570500, model: 'gpt-4o-mini-2024-07-18',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 22, completion_tokens: 2, total_tokens: 24, provider_request_id: 'f4c5d8e2b1a3c9d7e6f5a4b3c2d1e0f9' },
      },
      usage: { prompt_tokens: 22, completion_tokens: 2, total_tokens: 24, provider_request_id: 'f4c5d8e2b1a3c9d7e6f5a4b3c2d1e0f9' },
      providerResponseId: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
    });
  });

  it('maps a refused line to its error, code and HTTP status', () => {
    expect(convertOpenAIBatchResultLine(JSON.stringify(recorded.refusedLine))).toEqual({
      custom_id: 'line-2', outcome: 'errored', error: { code: 'string_above_max_length', message: "Invalid 'messages[0].content': string too long.", upstreamStatus: 400 },
    });
  });

  it.each([
    ['expired', recorded.expiredLine, 'expired', 'batch_expired'],
    ['cancelled', { ...recorded.expiredLine, error: { code: 'batch_cancelled', message: 'cancelled' } }, 'cancelled', 'batch_cancelled'],
    ['failed otherwise', { ...recorded.expiredLine, error: { code: 'request_timeout', message: 'timed out' } }, 'errored', 'request_timeout'],
  ])('maps a line never answered (%s)', (_name, body, outcome, code) => {
    expect(convertOpenAIBatchResultLine(JSON.stringify(body))).toMatchObject({ custom_id: 'line-3', outcome, error: { code } });
  });

  it('keeps a line whose answer is malformed, as errored', () => {
    const body = { ...recorded.answeredLine, response: { ...recorded.answeredLine.response, body: { id: 'x' } } };
    expect(convertOpenAIBatchResultLine(JSON.stringify(body))).toMatchObject({ custom_id: 'line-1', outcome: 'errored', error: { code: 'upstream_malformed_response' } });
  });

  it.each([['not JSON', '{"custom_id":'], ['no custom_id', JSON.stringify({ response: null, error: null })]])('refuses a line that is %s', (_name, text) => {
    expect(() => convertOpenAIBatchResultLine(text)).toThrow(/malformed batch result line/);
  });
});
