/**
 * Responses API bodies and streams in the exact shapes OpenAI sends (ids and numbers changed), replayed by
 * the simulator's `sim-fixture-<name>` models.
 */

/** `event: <type>` + `data: {...}` blocks, as OpenAI writes them. */
export const sse = (...events: Array<{ type: string } & Record<string, unknown>>) =>
  events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');

const RESPONSE_ID = 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b';
const MESSAGE_ID = 'msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b';
const TEXT = 'In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool.';

const usage = {
  input_tokens: 36,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 87,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 123,
};

const message = (status: string, text: string | null) => ({
  id: MESSAGE_ID,
  type: 'message',
  status,
  content: text === null ? [] : [{ type: 'output_text', annotations: [], logprobs: [], text }],
  role: 'assistant',
});

function responseObject(status: string, extra: Record<string, unknown> = {}) {
  const done = status !== 'in_progress';
  return {
    id: RESPONSE_ID,
    object: 'response',
    created_at: 1741476542,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: 'gpt-4.1-2025-04-14',
    output: done ? [message('completed', TEXT)] : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    prompt_cache_key: null,
    prompt_cache_retention: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: done ? 'default' : 'auto',
    store: false,
    temperature: 1.0,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_logprobs: 0,
    top_p: 1.0,
    truncation: 'disabled',
    usage: done ? usage : null,
    user: null,
    metadata: {},
    ...extra,
  };
}

export const textResponse = responseObject('completed');

const at = { item_id: MESSAGE_ID, output_index: 0, content_index: 0 };

/** Everything up to (not including) the terminal event. */
const openingEvents = [
  { type: 'response.created', sequence_number: 0, response: responseObject('in_progress') },
  { type: 'response.in_progress', sequence_number: 1, response: responseObject('in_progress') },
  { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: message('in_progress', null) },
  { type: 'response.content_part.added', sequence_number: 3, ...at, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } },
  { type: 'response.output_text.delta', sequence_number: 4, ...at, delta: 'In a peaceful grove', logprobs: [], obfuscation: 'Xq2' },
  { type: 'response.output_text.delta', sequence_number: 5, ...at, delta: TEXT.slice('In a peaceful grove'.length), logprobs: [], obfuscation: 'b7' },
];

const closingEvents = [
  { type: 'response.output_text.done', sequence_number: 6, ...at, text: TEXT, logprobs: [] },
  { type: 'response.content_part.done', sequence_number: 7, ...at, part: { type: 'output_text', annotations: [], logprobs: [], text: TEXT } },
  { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: message('completed', TEXT) },
];

export const textStream = sse(...openingEvents, ...closingEvents,
  { type: 'response.completed', sequence_number: 9, response: responseObject('completed') });

export const incompleteStream = sse(...openingEvents,
  { type: 'response.incomplete', sequence_number: 6, response: responseObject('incomplete', { incomplete_details: { reason: 'max_output_tokens' }, usage: { ...usage, output_tokens: 16, total_tokens: 52 } }) });

export const failedStream = sse(openingEvents[0],
  { type: 'response.failed', sequence_number: 1, response: responseObject('failed', { output: [], error: { code: 'server_error', message: 'The model failed to generate a response.' }, usage: null }) });

/** OpenAI's in-stream error event; the stream ends after it. */
export const errorEventStream = sse(openingEvents[0],
  { type: 'error', code: 'ERR_SOMETHING', message: 'Something went wrong', param: null, sequence_number: 1 });

/** The body stops after some deltas, without a terminal event. */
export const truncatedStream = sse(...openingEvents);

export const malformedLifecycleStream = sse({ type: 'response.created', sequence_number: 0, response: { object: 'response' } });

/** Some compatible servers send only `data:` lines, with the type inside. */
export const dataOnlyStream = sse(...openingEvents, ...closingEvents,
  { type: 'response.completed', sequence_number: 9, response: responseObject('completed') }).replace(/^event: .*\n/gm, '');
