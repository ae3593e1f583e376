import OpenAI from 'openai';
import { api, expectEnvelope } from './harness/api';
import { E2E_CLAUDE_MODEL, E2E_MODEL, formatModel } from './harness/catalog';
import { useStack } from './harness/stack';

/**
 * Hostile and careless input through the edge with the official client: each case is a 400 in the envelope
 * naming the param, and the simulator behind the model receives nothing.
 */
describe('hostile chat input is refused at the door (embedded)', () => {
  const stack = useStack('embedded');

  const nested = (levels: number) => { let v: object = {}; for (let i = 0; i < levels; i++) v = { a: v }; return v; };
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i % 10}`).join(' ');
  const user = (content: OpenAI.ChatCompletionUserMessageParam['content']) => [{ role: 'user' as const, content }];

  /** Runs `call`, expects a 400 naming `param`, and that the simulator saw no request meanwhile. */
  async function expectRefusedUpstreamFree(call: () => Promise<unknown>, param: string): Promise<void> {
    const before = stack.simulatorRequests!();
    const err = await call().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).toMatchObject({ status: 400, param });
    expect(stack.simulatorRequests!()).toBe(before);
  }

  const chat = (body: Record<string, unknown>) => () => stack.openai.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const base = { model: E2E_MODEL, messages: user('hello') };

  test.each<[string, Record<string, unknown>, string]>([
    ['extra_body nested 2,000 levels', { ...base, extra_body: nested(2000) }, 'extra_body'],
    ['metadata nested 2,000 levels', { ...base, metadata: nested(2000) }, 'metadata'],
    ['a tool schema nested 2,000 levels', { ...base, tools: [{ type: 'function', function: { name: 'f', parameters: nested(2000) } }] }, 'tools[0].function.parameters'],
    ['extra_body raising max_completion_tokens past the model limit', { ...base, extra_body: { max_completion_tokens: 100_000 } }, 'extra_body.max_completion_tokens'],
    ['extra_body replacing messages with a role validation refuses', { ...base, extra_body: { messages: [{ role: 'root', content: 'x' }] } }, 'extra_body.messages'],
    ['a 9,192-word prompt on a model whose prompt limit is 6,000', { ...base, messages: user(words(9192)) }, 'messages'],
    ['an image on a text-only model', { ...base, messages: user([{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }]) }, 'messages[0].content[0].type'],
    ['json_schema without a schema', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'answer' } } }, 'response_format.json_schema.schema'],
    ['top_k on an OpenAI-compatible model', { ...base, top_k: 20 }, 'top_k'],
    ['provider_options', { ...base, provider_options: { region: 'eu' } }, 'provider_options'],
    ['context_length', { ...base, context_length: 4096 }, 'context_length'],
    ['network_search', { ...base, network_search: true }, 'network_search'],
    ['verbosity on Anthropic', { model: formatModel('anthropic', 'echo'), messages: user('hi'), verbosity: 'low' }, 'verbosity'],
    ['prompt_cache_key on Gemini', { model: formatModel('gemini', 'echo'), messages: user('hi'), prompt_cache_key: 'k' }, 'prompt_cache_key'],
    ['parallel_tool_calls false on Gemini', { model: formatModel('gemini', 'echo'), messages: user('hi'), parallel_tool_calls: false }, 'parallel_tool_calls'],
    ['a logit_bias past 100', { ...base, logit_bias: { 50256: 500 } }, 'logit_bias.50256'],
    ['a logit_bias keyed by a word, not a token id', { ...base, logit_bias: { hello: 5 } }, 'logit_bias'],
    ['n past 128', { ...base, n: 129 }, 'n'],
    ['129 tools', { ...base, tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) }, 'tools'],
    ['an unknown verbosity', { ...base, verbosity: 'loud' }, 'verbosity'],
    ['a function name with a space', { ...base, tools: [{ type: 'function', function: { name: 'get weather' } }] }, 'tools[0].function.name'],
    ['a tool_choice naming a function tools does not declare', { ...base, tools: [{ type: 'function', function: { name: 'lookup' } }], tool_choice: { type: 'function', function: { name: 'search' } } }, 'tool_choice.function.name'],
    ['a prompt_cache_key of 65 characters', { ...base, prompt_cache_key: 'k'.repeat(65) }, 'prompt_cache_key'],
    ['a user of 257 characters', { ...base, user: 'u'.repeat(257) }, 'user'],
    ['a frequency_penalty past the API\'s 2, on a model that bounds none', { ...base, frequency_penalty: 2.5 }, 'frequency_penalty'],
    ['a top_logprobs past the API\'s 20', { ...base, logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
    ['a misspelt parameter', { ...base, temperatur: 0.5 }, 'temperatur'],
    ['reasoning_effort, which the gateway spells reasoning.effort', { ...base, reasoning_effort: 'high' }, 'reasoning_effort'],
    ['stream_options on a call that does not stream', { ...base, stream_options: { include_usage: true } }, 'stream_options'],
    ['a tool with Anthropic\'s cache_control beside its function', { ...base, tools: [{ type: 'function', function: { name: 'f' }, cache_control: { type: 'ephemeral' } }] }, 'tools[0].cache_control'],
    ['a json_schema name with a space', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'my answer', schema: { type: 'object' } } } }, 'response_format.json_schema.name'],
    ['user on Gemini, which has no end-user field', { model: formatModel('gemini', 'echo'), messages: user('hi'), user: 'end-user-1' }, 'user'],
    ['user and safety_identifier naming different users on Anthropic', { model: formatModel('anthropic', 'echo'), messages: user('hi'), user: 'u-1', safety_identifier: 'u-2' }, 'safety_identifier'],
  ])('chat: %s', async (_what, body, param) => {
    await expectRefusedUpstreamFree(chat(body), param);
  });

  test('chat streaming: the same refusal before any byte', async () => {
    await expectRefusedUpstreamFree(() => stack.openai.chat.completions.create({ ...base, stream: true, extra_body: nested(2000) } as never), 'extra_body');
  });

  test('async chat: nested extra_body is a 400 naming it, and no job is queued', async () => {
    const before = stack.simulatorRequests!();
    const res = await api(stack.baseURL, 'POST', '/async/chat/completions', { key: stack.key, body: { ...base, extra_body: nested(2000) } });
    expectEnvelope(res, 400, undefined, 'extra_body');
    expect(stack.simulatorRequests!()).toBe(before);
  });

  test.each<[string, Record<string, unknown>, string]>([
    ['an include value no tool produces', { model: E2E_MODEL, input: 'hi', include: ['file_search_call.results'] }, 'include[0]'],
    ['context_management of the wrong type', { model: E2E_MODEL, input: 'hi', context_management: [{ type: 'compaction', compact_threshold: 'soon' }] }, 'context_management[0].compact_threshold'],
    ['a text format json_schema without a schema', { model: E2E_MODEL, input: 'hi', text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema'],
    ['tools nested 2,000 levels', { model: E2E_MODEL, input: 'hi', tools: [{ type: 'function', name: 'f', parameters: nested(2000) }] }, 'tools[0].parameters'],
    ['top_logprobs without the logprobs include', { model: E2E_MODEL, input: 'hi', top_logprobs: 3 }, 'top_logprobs'],
    ['a function name with a space', { model: E2E_MODEL, input: 'hi', tools: [{ type: 'function', name: 'get weather' }] }, 'tools[0].name'],
    ['a tool_choice naming a function tools does not declare', { model: E2E_MODEL, input: 'hi', tools: [{ type: 'function', name: 'lookup' }], tool_choice: { type: 'function', name: 'search' } }, 'tool_choice.name'],
    ['an input_text part without text', { model: E2E_MODEL, input: [{ role: 'user', content: [{ type: 'input_text' }] }] }, 'input[0].content[0].text'],
    ['a metadata key of 65 characters', { model: E2E_MODEL, input: 'hi', metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
    ['a metadata value of 513 characters', { model: E2E_MODEL, input: 'hi', metadata: { trace: 'v'.repeat(513) } }, 'metadata.trace'],
    ['a safety_identifier of 65 characters', { model: E2E_MODEL, input: 'hi', safety_identifier: 's'.repeat(65) }, 'safety_identifier'],
  ])('responses: %s', async (_what, body, param) => {
    await expectRefusedUpstreamFree(() => stack.openai.responses.create(body as never), param);
  });

  test.each<[string, Record<string, unknown>, string]>([
    ['metadata nested 2,000 levels', { metadata: nested(2000) }, 'metadata'],
    ['a tool input_schema nested 2,000 levels', { tools: [{ name: 't', input_schema: nested(2000) }] }, 'tools[0].input_schema'],
    ['an image on a text-only model', { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] }, 'messages[0].content[0].type'],
    ['a 9,192-word prompt over the prompt limit', { messages: [{ role: 'user', content: words(9192) }] }, 'messages'],
    ['a text block without text', { messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
    ['a negative top_k', { top_k: -3 }, 'top_k'],
    ['stop_sequences as a string', { stop_sequences: 'x' }, 'stop_sequences'],
    ['a tool_choice naming a tool tools does not declare', { tools: [{ name: 'lookup', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'search' } }, 'tool_choice.name'],
    ['a tool name with a dot', { tools: [{ name: 'fs.read', input_schema: { type: 'object' } }] }, 'tools[0].name'],
    ['a tool without an input_schema', { tools: [{ name: 'lookup' }] }, 'tools[0].input_schema'],
    ['a thinking budget under 1,024', { thinking: { type: 'enabled', budget_tokens: 10 } }, 'thinking.budget_tokens'],
    ['a metadata.user_id of 257 characters', { metadata: { user_id: 'u'.repeat(257) } }, 'metadata.user_id'],
  ])('messages: %s', async (_what, fields, param) => {
    const before = stack.simulatorRequests!();
    const res = await api(stack.baseURL, 'POST', '/messages', {
      headers: { 'x-api-key': stack.key, 'anthropic-version': '2023-06-01' },
      body: { model: E2E_CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], ...fields },
    });
    expectEnvelope(res, 400, undefined, param);
    expect(stack.simulatorRequests!()).toBe(before);
  });

  test('a valid call still reaches the simulator, with a provider field the gateway does not model in extra_body', async () => {
    const before = stack.simulatorRequests!();
    const completion = await stack.openai.chat.completions.create({ ...base, extra_body: { service_tier: 'auto' } } as never) as OpenAI.ChatCompletion;
    expect(completion.choices[0].message.content).toContain('hello');
    expect(stack.simulatorRequests!()).toBe(before + 1);
  });

  test('an extra_body field the provider does not have comes back as the provider\'s 400, not a gateway fault', async () => {
    const err = await stack.openai.chat.completions.create({ ...base, extra_body: { repetition_penalty: 1.1 } } as never).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err).toMatchObject({ status: 400, message: expect.stringContaining('repetition_penalty') });
  });

  test.each<[string, string, Record<string, unknown>, string]>([
    ['messages', '/messages', { model: E2E_CLAUDE_MODEL, max_tokens: 10, messages: user('hi'), top_n: 3 }, 'top_n'],
    ['responses', '/responses', { model: E2E_MODEL, input: 'hi', max_tokens: 10 }, 'max_tokens'],
  ])('%s passes a field through, and the provider\'s refusal of one it does not have comes back as a 400', async (_api, path, body, field) => {
    const res = await api(stack.baseURL, 'POST', path, { key: stack.key, body });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain(field);
  });

  test('GET /v1/models lists what each model\'s provider honours', async () => {
    const params = async (id: string) => (await stack.openai.models.retrieve(id) as unknown as { supported_parameters: string[] }).supported_parameters;
    expect(await params(formatModel('openai', 'echo'))).toEqual(expect.arrayContaining(['tools', 'response_format', 'n', 'seed']));
    expect(await params(formatModel('openai', 'echo'))).not.toContain('top_k');
    expect(await params(formatModel('anthropic', 'echo'))).toEqual(expect.arrayContaining(['tools', 'response_format', 'top_k']));
    expect(await params(formatModel('anthropic', 'echo'))).not.toContain('verbosity');
  });
});
