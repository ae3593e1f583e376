import { anthropicMessageBatchSchema } from './anthropic-batch-api';
import { convertAnthropicBatchResultLine, convertAnthropicBatchState } from './convert-from-anthropic-batch';
import * as recorded from './fixtures/recorded-anthropic-batch-shapes';

const state = (body: object) => convertAnthropicBatchState(anthropicMessageBatchSchema.parse(body));

describe('Anthropic message batches, as recorded, in the normalized state', () => {
  it.each([
    ['in progress', recorded.inProgressBatch, { status: 'in_progress', upstreamStatus: 'in_progress', hasResults: false, counts: { total: 4, succeeded: 0, failed: 0 } }],
    ['canceling', recorded.cancelingBatch, { status: 'cancelling', hasResults: false }],
    ['ended with expired lines', recorded.endedBatch, { status: 'expired', hasResults: true, counts: { total: 4, succeeded: 2, failed: 2 } }],
    ['ended after a cancel', recorded.canceledBatch, { status: 'cancelled', hasResults: true, counts: { total: 4, succeeded: 1, failed: 3 } }],
    ['ended with every line answered', { ...recorded.endedBatch, request_counts: { processing: 0, succeeded: 3, errored: 1, canceled: 0, expired: 0 } }, { status: 'completed', hasResults: true }],
  ])('%s', (_name, body, expected) => {
    expect(state(body)).toMatchObject({ error: null, ...expected });
  });

  it('reports a status word it does not know as a malformed answer instead of guessing', () => {
    expect(anthropicMessageBatchSchema.safeParse({ ...recorded.inProgressBatch, processing_status: 'paused' }).success).toBe(false);
  });
});

describe('Anthropic batch result lines, as recorded', () => {
  it('maps a succeeded line through the chat mapper, with usage and the message id', () => {
    expect(convertAnthropicBatchResultLine(JSON.stringify(recorded.succeededLine), {})).toEqual({
      custom_id: 'line-1',
      outcome: 'succeeded',
      completion: {
        id: 'msg_014VwiXbi91y3JMjcpyGBHX5', object: 'chat.completion', created: expect.any(Number), model: 'claude-sonnet-4-20250514',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello again! How can I help?' }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 11, completion_tokens: 8, total_tokens: 19, provider_request_id: 'msg_014VwiXbi91y3JMjcpyGBHX5' },
      },
      usage: { prompt_tokens: 11, completion_tokens: 8, total_tokens: 19, provider_request_id: 'msg_014VwiXbi91y3JMjcpyGBHX5' },
      providerResponseId: 'msg_014VwiXbi91y3JMjcpyGBHX5',
    });
  });

  it('reads a forced JSON tool as the answer when the handle says the line asked for JSON', () => {
    const message = {
      ...recorded.succeededLine.result.message,
      content: [{ type: 'tool_use', id: 'toolu_01', name: 'answer', input: { city: 'Paris' } }],
      stop_reason: 'tool_use',
    };
    const text = JSON.stringify({ custom_id: 'line-1', result: { type: 'succeeded', message } });
    expect(convertAnthropicBatchResultLine(text, { 'line-1': { jsonToolName: 'answer', includeReasoning: false } })).toMatchObject({
      completion: { choices: [{ message: { content: '{"city":"Paris"}' }, finish_reason: 'stop' }] },
    });
    expect(convertAnthropicBatchResultLine(text, {})).toMatchObject({
      completion: { choices: [{ message: { content: null, tool_calls: [{ function: { name: 'answer' } }] }, finish_reason: 'tool_calls' }] },
    });
  });

  it.each([
    ['errored', recorded.erroredLine, { outcome: 'errored', error: { code: 'invalid_request_error', message: 'max_tokens: Field required', upstreamStatus: 400 } }],
    ['errored, older flat error', { ...recorded.erroredLine, result: { type: 'errored', error: { type: 'overloaded_error', message: 'Overloaded' } } }, { outcome: 'errored', error: { code: 'overloaded_error', upstreamStatus: 529 } }],
    // An error type the table does not hold, even one named like an object member, is a 500.
    ['errored with an unknown error type', { ...recorded.erroredLine, result: { type: 'errored', error: { type: 'constructor', message: 'x' } } }, { outcome: 'errored', error: { code: 'constructor', upstreamStatus: 500 } }],
    ['canceled', recorded.canceledLine, { outcome: 'cancelled', error: { code: 'batch_cancelled' } }],
    ['expired', recorded.expiredLine, { outcome: 'expired', error: { code: 'batch_expired' } }],
  ])('maps a %s line', (_name, body, expected) => {
    expect(convertAnthropicBatchResultLine(JSON.stringify(body), {})).toMatchObject({ custom_id: body.custom_id, ...expected });
  });

  it('keeps a line whose answer is malformed, as errored', () => {
    const text = JSON.stringify({ custom_id: 'line-1', result: { type: 'succeeded', message: { id: 'msg_x' } } });
    expect(convertAnthropicBatchResultLine(text, {})).toMatchObject({ custom_id: 'line-1', outcome: 'errored', error: { code: 'upstream_malformed_response' } });
  });

  it('refuses a line of a result type it does not know', () => {
    expect(() => convertAnthropicBatchResultLine(JSON.stringify({ custom_id: 'x', result: { type: 'paused' } }), {})).toThrow(/malformed batch result line/);
  });
});
