import { InputError, NotImplementedError } from '@gw/platform';
import { validateResponsesRequest } from './responses-rules';

const BASE = { model: 'm', input: 'hello' };
const nested = (levels: number) => { let v: object = {}; for (let i = 0; i < levels; i++) v = { a: v }; return v; };
const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));

describe('validateResponsesRequest', () => {
  it.each([
    ['a string input', {}],
    ['input items', { input: [{ role: 'developer', content: 'be brief' }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }, { type: 'function_call_output', call_id: 'c1', output: '{}' }] }],
    ['a prompt template instead of input', { input: undefined, prompt: { id: 'pmpt_1', variables: { a: 'b' } } }],
    ['16 metadata pairs', { metadata: sixteen }],
    ['the bounds themselves', { temperature: 2, top_logprobs: 20, include: ['message.output_text.logprobs'] }],
    ['zero bounds', { temperature: 0, top_logprobs: 0 }],
    ['store false and background false', { store: false, background: false }],
    ['nulls for optional fields', { previous_response_id: null, conversation: null, instructions: null, reasoning: null, metadata: null }],
    ['every enum value the field table allows', {
      truncation: 'auto', service_tier: 'flex', prompt_cache_retention: '24h', text: { verbosity: 'high', format: { type: 'text' } },
      reasoning: { effort: 'xhigh', summary: 'detailed', context: 'all_turns' }, tool_choice: 'required',
    }],
    ['a tool_choice object', { tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } }],
    ['a tool_choice naming a declared function', { tools: [{ type: 'function', name: 'get_weather-2' }], tool_choice: { type: 'function', name: 'get_weather-2' } }],
    ['stream_options', { stream: true, stream_options: { include_obfuscation: false } }],
    ['tools and include', { tools: [{ type: 'function', name: 'f', parameters: {} }], include: ['reasoning.encrypted_content'] }],
    ['include matching its tools', { tools: [{ type: 'web_search_preview' }, { type: 'file_search', vector_store_ids: ['v'] }], include: ['web_search_call.action.sources', 'file_search_call.results'] }],
    ['context_management, prompt and moderation of the right types', {
      context_management: [{ type: 'compaction', compact_threshold: 0.8 }], prompt: { id: 'p', variables: { a: 'b' }, version: '2' }, moderation: { model: 'omni' },
    }],
    ['caller identifiers at their bounds', { prompt_cache_key: 'k'.repeat(64), safety_identifier: 's'.repeat(64), user: 'u'.repeat(256) }],
    ['a json_schema text format', { text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } } }],
    ['fields it does not know', { some_new_field: { x: 1 } }],
  ])('accepts %s', (_name, fields) => {
    const body = { ...BASE, ...fields };
    expect(validateResponsesRequest(body)).toBe(body);
  });

  it.each([
    ['previous_response_id', 'resp_1'],
    ['conversation', 'conv_1'],
    ['conversation', { id: 'conv_1' }],
    ['background', true],
    ['store', true],
  ])('answers 501 unsupported_feature for %s = %j', (param, value) => {
    const err = catchError(() => validateResponsesRequest({ ...BASE, [param]: value }));
    expect(err).toBeInstanceOf(NotImplementedError);
    expect(err).toMatchObject({ status: 501, code: 'unsupported_feature', param });
  });

  it('answers 501 before looking at anything else', () => {
    expect(catchError(() => validateResponsesRequest({ store: true }))).toMatchObject({ status: 501, param: 'store' });
  });

  it.each([
    ['previous_response_id', true],
    ['previous_response_id', { id: 'resp_1' }],
    ['conversation', 5],
    ['conversation', ['conv_1']],
    ['background', 'yes'],
    ['store', 'true'],
  ])('a stateful field of the wrong type is a 400, not a 501: %s = %j', (param, value) => {
    const err = catchError(() => validateResponsesRequest({ ...BASE, [param]: value }));
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ status: 400, param });
  });

  it.each([
    ['a body that is not an object', [], 'body'],
    ['no model', { input: 'x' }, 'model'],
    ['an empty model', { ...BASE, model: '' }, 'model'],
    ['no input', { model: 'm' }, 'input'],
    ['a numeric input', { ...BASE, input: 7 }, 'input'],
    ['an input item that is not an object', { ...BASE, input: ['hi'] }, 'input[0]'],
    ['an input item role', { ...BASE, input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
    ['an input item status', { ...BASE, input: [{ type: 'message', role: 'user', content: 'x', status: 'done' }] }, 'input[0].status'],
    ['an input item without type or role', { ...BASE, input: [{ content: 'x' }] }, 'input[0].type'],
    ['17 metadata pairs', { ...BASE, metadata: { ...sixteen, k16: 'v' } }, 'metadata'],
    ['metadata that is an array', { ...BASE, metadata: ['a'] }, 'metadata'],
    ['a metadata value that is a number', { ...BASE, metadata: { a: 1 } }, 'metadata.a'],
    ['a metadata key of 65 characters (not echoed in the param)', { ...BASE, metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
    ['a metadata value of 513 characters', { ...BASE, metadata: { a: 'v'.repeat(513) } }, 'metadata.a'],
    ['a prompt_cache_key of 65 characters', { ...BASE, prompt_cache_key: 'k'.repeat(65) }, 'prompt_cache_key'],
    ['a safety_identifier of 65 characters', { ...BASE, safety_identifier: 's'.repeat(65) }, 'safety_identifier'],
    ['a user of 257 characters', { ...BASE, user: 'u'.repeat(257) }, 'user'],
    ['temperature above 2', { ...BASE, temperature: 2.01 }, 'temperature'],
    ['temperature below 0', { ...BASE, temperature: -1 }, 'temperature'],
    ['temperature as a string', { ...BASE, temperature: '1' }, 'temperature'],
    ['top_logprobs above 20', { ...BASE, top_logprobs: 21 }, 'top_logprobs'],
    ['top_logprobs below 0', { ...BASE, top_logprobs: -1 }, 'top_logprobs'],
    ['a fractional top_logprobs', { ...BASE, top_logprobs: 1.5 }, 'top_logprobs'],
    ['max_output_tokens of 0', { ...BASE, max_output_tokens: 0 }, 'max_output_tokens'],
    ['a max_output_tokens past 2^53, which JSON.parse has rounded', { ...BASE, max_output_tokens: 2 ** 60 }, 'max_output_tokens'],
    ['truncation', { ...BASE, truncation: 'sometimes' }, 'truncation'],
    ['service_tier', { ...BASE, service_tier: 'gold' }, 'service_tier'],
    ['prompt_cache_retention', { ...BASE, prompt_cache_retention: '1h' }, 'prompt_cache_retention'],
    ['reasoning.effort', { ...BASE, reasoning: { effort: 'max' } }, 'reasoning.effort'],
    ['reasoning.summary', { ...BASE, reasoning: { summary: 'long' } }, 'reasoning.summary'],
    ['reasoning.context', { ...BASE, reasoning: { context: 'everything' } }, 'reasoning.context'],
    ['reasoning that is not an object', { ...BASE, reasoning: 'high' }, 'reasoning'],
    ['text.verbosity', { ...BASE, text: { verbosity: 'loud' } }, 'text.verbosity'],
    ['a tool_choice string', { ...BASE, tool_choice: 'always' }, 'tool_choice'],
    ['a tool_choice object without a type', { ...BASE, tool_choice: { name: 'f' } }, 'tool_choice'],
    ['a tool_choice naming a function tools does not declare', { ...BASE, tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'g' } }, 'tool_choice.name'],
    ['a function tool without a name', { ...BASE, tools: [{ type: 'function', parameters: {} }] }, 'tools[0].name'],
    ['a function name with a space', { ...BASE, tools: [{ type: 'web_search_preview' }, { type: 'function', name: 'get weather' }] }, 'tools[1].name'],
    ['a function name over 64 characters', { ...BASE, tools: [{ type: 'function', name: 'f'.repeat(65) }] }, 'tools[0].name'],
    ['stream_options.include_obfuscation as a string', { ...BASE, stream_options: { include_obfuscation: 'no' } }, 'stream_options.include_obfuscation'],
    ['an input_text part without text', { ...BASE, input: [{ role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_text' }] }] }, 'input[0].content[1].text'],
    ['a content part without a type', { ...BASE, input: [{ role: 'user', content: ['hi'] }] }, 'input[0].content[0].type'],
    ['a tool_choice mode', { ...BASE, tool_choice: { type: 'allowed_tools', mode: 'sometimes' } }, 'tool_choice.mode'],
    ['tools that are not an array', { ...BASE, tools: {} }, 'tools'],
    ['a tool without a type', { ...BASE, tools: [{ name: 'f' }] }, 'tools[0].type'],
    ['include of non-strings', { ...BASE, include: [1] }, 'include'],
    ['stream that is not a boolean', { ...BASE, stream: 'yes' }, 'stream'],
    ['instructions that are not a string', { ...BASE, instructions: 5 }, 'instructions'],
    ['top_logprobs without the logprobs include', { ...BASE, top_logprobs: 5 }, 'top_logprobs'],
    ['an unknown include value', { ...BASE, include: ['reasoning.encrypted_content', 'everything'] }, 'include[1]'],
    ['an include value every object has', { ...BASE, include: ['constructor'] }, 'include[0]', /^include\[0\] must be one of web_search_call/],
    ['include of file_search results without a file_search tool', { ...BASE, include: ['file_search_call.results'] }, 'include[0]'],
    ['include of web search sources with only a function tool', { ...BASE, tools: [{ type: 'function', name: 'f' }], include: ['web_search_call.action.sources'] }, 'include[0]'],
    ['include of code interpreter outputs without that tool', { ...BASE, include: ['code_interpreter_call.outputs'] }, 'include[0]'],
    ['a context_management type', { ...BASE, context_management: [{ type: 'summarize' }] }, 'context_management[0].type'],
    ['a context_management compact_threshold as a string', { ...BASE, context_management: [{ type: 'compaction', compact_threshold: 'high' }] }, 'context_management[0].compact_threshold'],
    ['a prompt without an id', { ...BASE, prompt: { variables: {} } }, 'prompt.id'],
    ['a prompt id that is a number', { ...BASE, prompt: { id: 5 } }, 'prompt.id'],
    ['prompt variables that are a string', { ...BASE, prompt: { id: 'p', variables: 'x' } }, 'prompt.variables'],
    ['a prompt version that is a number', { ...BASE, prompt: { id: 'p', version: 2 } }, 'prompt.version'],
    ['moderation that is a string', { ...BASE, moderation: 'strict' }, 'moderation'],
    ['a moderation model that is a number', { ...BASE, moderation: { model: 1 } }, 'moderation.model'],
    ['a text format json_schema without a schema', { ...BASE, text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema'],
    ['a text format json_schema without a name', { ...BASE, text: { format: { type: 'json_schema', schema: {} } } }, 'text.format.name'],
    ['an unknown text format type', { ...BASE, text: { format: { type: 'yaml' } } }, 'text.format.type'],
    ['metadata nested 5,000 levels (values must be strings)', { ...BASE, metadata: nested(5000) }, 'metadata.a'],
    ['a tool schema nested 5,000 levels', { ...BASE, tools: [{ type: 'function', name: 'f', parameters: nested(5000) }] }, 'tools[0].parameters'],
    ['prompt variables nested 5,000 levels', { ...BASE, prompt: { id: 'p', variables: nested(5000) } }, 'prompt.variables'],
    ['input nested 5,000 levels', { ...BASE, input: [{ role: 'user', content: [{ type: 'input_text', text: 'x', deep: nested(5000) }] }] }, 'input'],
    ['a vendor field nested 5,000 levels', { ...BASE, vendor: nested(5000) }, 'vendor'],
  ])('answers 400 for %s, naming the param', (_name, body, param, ...message: RegExp[]) => {
    const err = catchError(() => validateResponsesRequest(body));
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ status: 400, param });
    // A rest parameter, so that jest does not take a fourth parameter for its done callback.
    for (const m of message) expect((err as InputError).message).toMatch(m);
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}
