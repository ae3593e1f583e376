import { modelSchema } from '@gw/catalog';
import { GatewayError } from '@gw/platform';
import { validateChatBody, validateChatForModel } from './validate-chat-request';

/** A model with every kind of bound: min/max, options, max_items, per-request completion limit. */
const MODEL = modelSchema.parse({
  id: 'vendor/bounded-chat',
  name: 'Bounded chat',
  owned_by: 'tests',
  updated_at: '2026-01-01T00:00:00Z',
  architecture: { input_modalities: ['text'], output_modalities: ['text'] },
  per_request_limits: { prompt_tokens: 4000, completion_tokens: 1000 },
  parameter_schema: {
    temperature: { type: 'number', min: 0, max: 2 },
    top_p: { type: 'number', min: 0, max: 1 },
    max_completion_tokens: { type: 'integer', min: 1, max: 1000 },
    stop: { type: 'array', max_items: 4 },
    verbosity: { type: 'string', options: ['low', 'medium', 'high'] },
    top_k: { type: 'integer', min: 1, max: 100 },
  },
  deployments: [{ id: 'd', provider: 'p', provider_model: 'm', price: { prompt_per_million: '1', completion_per_million: '1' } }],
});

/** Bounded only by per_request_limits: the completion limit applies without a parameter_schema entry. */
const LIMITED_ONLY = modelSchema.parse({
  ...MODEL, id: 'vendor/limits-only', parameter_schema: {}, per_request_limits: { prompt_tokens: null, completion_tokens: 256 },
});

const user = { role: 'user', content: 'hello' };
const base = { model: MODEL.id, messages: [user] };

/** The error a body gets, through both checks as the chat service runs them. */
function refusal(body: unknown, model = MODEL): GatewayError | null {
  try {
    validateChatForModel(validateChatBody(body), model);
    return null;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
}

describe('chat body validation: each invalid field is a 400 naming it', () => {
  it.each<[string, unknown, string]>([
    ['a body that is not an object', [base], 'body'],
    ['a null body', null, 'body'],
    ['a missing model', { messages: [user] }, 'model'],
    ['an empty model', { ...base, model: '' }, 'model'],
    ['a model that is not a string', { ...base, model: 7 }, 'model'],
    ['missing messages', { model: MODEL.id }, 'messages'],
    ['empty messages', { ...base, messages: [] }, 'messages'],
    ['messages not an array', { ...base, messages: 'hello' }, 'messages'],
    ['a message that is not an object', { ...base, messages: [user, 'hi'] }, 'messages[1]'],
    ['a message without a role', { ...base, messages: [{ content: 'x' }] }, 'messages[0].role'],
    ['an unknown role', { ...base, messages: [user, { role: 'robot', content: 'x' }] }, 'messages[1].role'],
    ['content that is a number', { ...base, messages: [user, { role: 'user', content: 5 }] }, 'messages[1].content'],
    ['missing content', { ...base, messages: [{ role: 'user' }] }, 'messages[0].content'],
    ['null content without tool calls', { ...base, messages: [user, { role: 'assistant', content: null }] }, 'messages[1].content'],
    ['a content part without a type', { ...base, messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 'messages[0].content'],
    ['a name that is not a string', { ...base, messages: [{ ...user, name: 3 }] }, 'messages[0].name'],
    ['a prompt_cache_key of 65 characters', { ...base, prompt_cache_key: 'k'.repeat(65) }, 'prompt_cache_key'],
    ['a safety_identifier of 65 characters', { ...base, safety_identifier: 's'.repeat(65) }, 'safety_identifier'],
    ['a safety_identifier that is not a string', { ...base, safety_identifier: 5 }, 'safety_identifier'],
    ['a user of 257 characters', { ...base, user: 'u'.repeat(257) }, 'user'],
    ['a tool message without tool_call_id', { ...base, messages: [user, { role: 'tool', content: '42' }] }, 'messages[1].tool_call_id'],
    ['temperature as a string', { ...base, temperature: '0.5' }, 'temperature'],
    ['top_p as a boolean', { ...base, top_p: true }, 'top_p'],
    ['frequency_penalty as a string', { ...base, frequency_penalty: 'high' }, 'frequency_penalty'],
    ['max_completion_tokens not an integer', { ...base, max_completion_tokens: 10.5 }, 'max_completion_tokens'],
    ['max_completion_tokens of zero', { ...base, max_completion_tokens: 0 }, 'max_completion_tokens'],
    ['n of zero', { ...base, n: 0 }, 'n'],
    ['seed as a string', { ...base, seed: '42' }, 'seed'],
    // Past 2^53 JSON.parse rounds the number: the provider would get a seed the caller never sent.
    ['a seed past 2^53', { ...base, seed: 2 ** 70 }, 'seed'],
    ['a max_tokens past 2^53', { ...base, max_tokens: 1e300 }, 'max_tokens'],
    ['stream as a string', { ...base, stream: 'true' }, 'stream'],
    ['stream_options not an object', { ...base, stream_options: true }, 'stream_options'],
    ['stream_options.include_usage as a string', { ...base, stream: true, stream_options: { include_usage: 'yes' } }, 'stream_options.include_usage'],
    ['metadata as an array', { ...base, metadata: ['a'] }, 'metadata'],
    ['logit_bias as a string', { ...base, logit_bias: '50256:-100' }, 'logit_bias'],
    ['a logit_bias key that is no token id', { ...base, logit_bias: { hello: 5 } }, 'logit_bias'],
    ['a negative logit_bias token id', { ...base, logit_bias: { '-5': 1 } }, 'logit_bias'],
    ['a logit_bias over 100', { ...base, logit_bias: { 50256: 101 } }, 'logit_bias.50256'],
    ['a logit_bias under -100', { ...base, logit_bias: { 50256: -100.5 } }, 'logit_bias.50256'],
    ['a logit_bias that is not a number', { ...base, logit_bias: { 50256: '-100' } }, 'logit_bias.50256'],
    ['n over 128', { ...base, n: 129 }, 'n'],
    ['129 tools', { ...base, tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) }, 'tools'],
    ['top_logprobs without logprobs', { ...base, top_logprobs: 5 }, 'top_logprobs'],
    ['top_logprobs with logprobs=false', { ...base, logprobs: false, top_logprobs: 5 }, 'top_logprobs'],
    ['stop as a number', { ...base, stop: 1 }, 'stop'],
    ['stop with a non-string item', { ...base, stop: ['a', 2] }, 'stop'],
    ['stop over the model max_items', { ...base, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['tools not an array', { ...base, tools: { type: 'function' } }, 'tools'],
    ['a tool without a type', { ...base, tools: [{ function: { name: 'f' } }] }, 'tools[0].type'],
    ['a tool function without a name', { ...base, tools: [{ type: 'function', function: { name: 'ok' } }, { type: 'function', function: {} }] }, 'tools[1].function.name'],
    ['a tool with an empty function name', { ...base, tools: [{ type: 'function', function: { name: '' } }] }, 'tools[0].function.name'],
    ['a tool without a function', { ...base, tools: [{ type: 'function' }] }, 'tools[0].function.name'],
    ['a function name with a space', { ...base, tools: [{ type: 'function', function: { name: 'get weather' } }] }, 'tools[0].function.name'],
    ['a function name over 64 characters', { ...base, tools: [{ type: 'function', function: { name: 'f'.repeat(65) } }] }, 'tools[0].function.name'],
    ['a tool_choice naming a function not in tools', { ...base, tools: [{ type: 'function', function: { name: 'lookup' } }], tool_choice: { type: 'function', function: { name: 'search' } } }, 'tool_choice.function.name'],
    ['a tool_choice naming a function without tools', { ...base, tool_choice: { type: 'function', function: { name: 'search' } } }, 'tool_choice.function.name'],
    ['an unknown tool_choice', { ...base, tool_choice: 'sometimes' }, 'tool_choice'],
    ['a tool_choice object without a function name', { ...base, tool_choice: { type: 'function', function: {} } }, 'tool_choice'],
    ['an unknown response_format.type', { ...base, response_format: { type: 'xml' } }, 'response_format.type'],
    ['json_schema without json_schema', { ...base, response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
    ['json_schema without a name', { ...base, response_format: { type: 'json_schema', json_schema: { schema: {} } } }, 'response_format.json_schema.name'],
    ['json_schema without a schema', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, 'response_format.json_schema.schema'],
    ['json_schema with a schema that is not an object', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: 'y' } } }, 'response_format.json_schema.schema'],
    ['reasoning not an object', { ...base, reasoning: 'high' }, 'reasoning'],
    ['an unknown reasoning.effort', { ...base, reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    ['reasoning.max_tokens of zero', { ...base, reasoning: { max_tokens: 0 } }, 'reasoning.max_tokens'],
    ['reasoning.exclude as a string', { ...base, reasoning: { exclude: 'yes' } }, 'reasoning.exclude'],
    ['include as a string', { ...base, include: 'usage' }, 'include'],
    ['temperature over the model max', { ...base, temperature: 2.5 }, 'temperature'],
    ['temperature under the model min', { ...base, temperature: -0.1 }, 'temperature'],
    ['top_k over the model max', { ...base, top_k: 101 }, 'top_k'],
    ['a value outside the model options', { ...base, verbosity: 'loud' }, 'verbosity'],
    ['max_completion_tokens over the model limit', { ...base, max_completion_tokens: 1001 }, 'max_completion_tokens'],
    ['max_tokens over per_request_limits', { ...base, max_tokens: 1001 }, 'max_tokens'],
    // A field inside the request's own objects that they do not have is named, never dropped.
    ['stream_options without a stream', { ...base, stream_options: { include_usage: true } }, 'stream_options'],
    ['stream_options with another field', { ...base, stream: true, stream_options: { include_usage: true, include_obfuscation: false } }, 'stream_options.include_obfuscation'],
    ['reasoning with a misspelt field', { ...base, reasoning: { efort: 'high' } }, 'reasoning.efort'],
    ['response_format with another field', { ...base, response_format: { type: 'json_object', schema: {} } }, 'response_format.schema'],
    ['json_schema with another field', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {}, strict_mode: true } } }, 'response_format.json_schema.strict_mode'],
    ['json_schema with a name a provider refuses', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'my answer', schema: {} } } }, 'response_format.json_schema.name'],
    ['a tool with another field', { ...base, tools: [{ type: 'function', function: { name: 'f' }, cache_control: { type: 'ephemeral' } }] }, 'tools[0].cache_control'],
    ['a function with another field', { ...base, tools: [{ type: 'function', function: { name: 'f', input_schema: {} } }] }, 'tools[0].function.input_schema'],
    ['a tool_choice with another field', { ...base, tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'function', function: { name: 'f' }, disable_parallel_tool_use: true } }, 'tool_choice.disable_parallel_tool_use'],
    ['a tool_choice function with another field', { ...base, tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'function', function: { name: 'f', arguments: '{}' } } }, 'tool_choice.function.arguments'],
  ])('%s -> param %s', (_what, body, param) => {
    const err = refusal(body);
    expect(err).not.toBeNull();
    expect({ status: err!.status, type: err!.type, param: err!.param }).toEqual({ status: 400, type: 'invalid_request_error', param });
  });

  it('verbosity is low, medium or high even for a model that does not list its options', () => {
    expect(refusal({ model: LIMITED_ONLY.id, messages: [user], verbosity: 'loud' }, LIMITED_ONLY)?.param).toBe('verbosity');
    expect(refusal({ model: LIMITED_ONLY.id, messages: [user], verbosity: 'low' }, LIMITED_ONLY)).toBeNull();
  });

  it.each([
    ['max_completion_tokens', { model: LIMITED_ONLY.id, messages: [user], max_completion_tokens: 257 }],
    ['max_tokens', { model: LIMITED_ONLY.id, messages: [user], max_tokens: 257 }],
  ])('per_request_limits bound %s even without a parameter_schema entry', (param, body) => {
    expect(refusal(body, LIMITED_ONLY)?.param).toBe(param);
    expect(refusal({ ...body, [param]: 256 }, LIMITED_ONLY)).toBeNull();
  });
});

describe('valid chat bodies pass untouched', () => {
  it.each<[string, Record<string, unknown>]>([
    ['the smallest body', base],
    ['every bound at its edge (never clamped)', {
      ...base, temperature: 2, top_p: 0, max_completion_tokens: 1000, stop: ['a', 'b', 'c', 'd'], top_k: 100, verbosity: 'high',
    }],
    ['max_tokens at the per-request limit', { ...base, max_tokens: 1000 }],
    ['stop as one string', { ...base, stop: '\n\n' }],
    ['a tool-calling conversation', {
      ...base,
      messages: [
        { role: 'system', content: 'be brief' },
        user,
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":20}' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    }],
    ['structured output', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'answer', description: 'the answer', strict: true, schema: { type: 'object' } } } }],
    ['a function with every field it has', { ...base, tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }] }],
    ['logprobs with top_logprobs', { ...base, logprobs: true, top_logprobs: 5 }],
    ['streaming with usage', { ...base, stream: true, stream_options: { include_usage: true } }],
    ['reasoning options', { ...base, reasoning: { enabled: true, effort: 'xhigh', max_tokens: 512, exclude: true } }],
    ['n, logit_bias, a function name and the tools count at their bounds', {
      ...base, n: 128, logit_bias: { 0: 100, 4294967295: -100 },
      tools: [{ type: 'function', function: { name: `get-weather_${'x'.repeat(52)}` } }, ...Array.from({ length: 127 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }))],
    }],
    ['metadata and extra fields the translator handles', { ...base, metadata: { team: 'a' }, extra_body: { x: 1, vendor_field: { kept: true } }, logit_bias: { '50256': -100 }, seed: 7, n: 2, user: 'u-1', safety_identifier: 's-1' }],
  ])('%s', (_what, body) => {
    const before = structuredClone(body);
    const req = validateChatBody(body);
    validateChatForModel(req, MODEL);
    expect(req).toEqual(before);
    expect(body).toEqual(before);
  });
});

/** Nests `levels` objects: {"a":{"a":...}}. */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}
const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

describe('free-form objects are bounded at the door (JSON_BOUNDS)', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['extra_body nested 5,000 levels', { ...base, extra_body: nested(5000) }, 'extra_body'],
    ['metadata nested 5,000 levels', { ...base, metadata: nested(5000) }, 'metadata'],
    ['provider_options one level past the bound', { ...base, provider_options: nested(32) }, 'provider_options'],
    ['a tool schema nested 5,000 levels', { ...base, tools: [{ type: 'function', function: { name: 'f', parameters: nested(5000) } }] }, 'tools[0].function.parameters'],
    ['a json_schema nested 5,000 levels', { ...base, response_format: { type: 'json_schema', json_schema: { name: 'n', schema: nested(5000) } } }, 'response_format.json_schema.schema'],
    ['message content nested 5,000 levels', { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', deep: nested(5000) }] }] }, 'messages'],
    ['an unknown field nested 5,000 levels', { ...base, vendor_field: nested(5000) }, 'vendor_field'],
    ['extra_body with 5,000 keys', { ...base, extra_body: manyKeys(5000) }, 'extra_body'],
    ['metadata with 5,000 keys', { ...base, metadata: manyKeys(5000) }, 'metadata'],
    // JSON.parse reads 1e400 as Infinity, which JSON.stringify would send on (and store) as null.
    ['metadata holding a number too large for JSON', { ...base, metadata: JSON.parse('{"a":1e400}') }, 'metadata'],
    ['a tool schema holding -1e400', { ...base, tools: [{ type: 'function', function: { name: 'f', parameters: JSON.parse('{"type":"object","minimum":-1e400}') } }] }, 'tools[0].function.parameters'],
    ['extra_body holding 1e400 in an array', { ...base, extra_body: JSON.parse('{"a":[1,1e400]}') }, 'extra_body'],
  ])('%s', (_what, body, param) => {
    expect(refusal(body)).toMatchObject({ status: 400, param });
  });

  it('takes nesting up to the bound', () => {
    expect(refusal({ ...base, extra_body: nested(31), metadata: manyKeys(4000) })).toBeNull();
  });
});

describe('extra_body cannot replace a validated field', () => {
  it.each<[string, Record<string, unknown>]>([
    ['max_completion_tokens past the model limit', { max_completion_tokens: 1_000_000 }],
    ['max_tokens', { max_tokens: 1_000_000 }],
    ['messages with a role validation refuses', { messages: [{ role: 'root', content: 'x' }] }],
    ['model', { model: 'another/model' }],
    ['temperature', { temperature: 99 }],
    ['stream', { stream: true }],
    ['tools', { tools: 'x' }],
  ])('%s', (_what, extra) => {
    const [field] = Object.keys(extra);
    expect(refusal({ ...base, extra_body: extra })).toMatchObject({ status: 400, param: `extra_body.${field}` });
  });
});

describe('prompt limits hold (estimated tokens)', () => {
  const WINDOWED = modelSchema.parse({ ...MODEL, id: 'vendor/windowed', context_length: 4500 });
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i % 10}`).join(' ');

  it.each<[string, Record<string, unknown>, typeof MODEL, string]>([
    ['a 9,192-word prompt over a 4,000-token prompt limit', { ...base, messages: [{ role: 'user', content: words(9192) }] }, MODEL, 'messages'],
    ['text without spaces counted by bytes', { ...base, messages: [{ role: 'user', content: 'x'.repeat(25_000) }] }, MODEL, 'messages'],
    ['the limit split over many messages and parts', {
      ...base, messages: Array.from({ length: 50 }, () => ({ role: 'user', content: [{ type: 'text', text: words(90) }] })),
    }, MODEL, 'messages'],
    ['prompt plus max_completion_tokens over context_length', { ...base, messages: [{ role: 'user', content: words(3600) }], max_completion_tokens: 1000 }, WINDOWED, 'max_completion_tokens'],
    ['prompt plus max_tokens over context_length', { ...base, messages: [{ role: 'user', content: words(3600) }], max_tokens: 1000 }, WINDOWED, 'max_tokens'],
  ])('%s', (_what, body, model, param) => {
    expect(refusal(body, model)).toMatchObject({ status: 400, param, code: 'context_length_exceeded' });
  });

  it.each<[string, Record<string, unknown>, typeof MODEL]>([
    ['a prompt under the limit', { ...base, messages: [{ role: 'user', content: words(3000) }] }, MODEL],
    ['prompt plus output within the window', { ...base, messages: [{ role: 'user', content: words(3000) }], max_completion_tokens: 1000 }, WINDOWED],
    ['image data not counted as text', { ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(100_000)}` } }] }] }, modelSchema.parse({ ...MODEL, architecture: { input_modalities: ['text', 'image'], output_modalities: ['text'] } })],
  ])('%s passes', (_what, body, model) => {
    expect(refusal(body, model)).toBeNull();
  });
});

describe('input the model cannot take is refused, never dropped', () => {
  const VISION = modelSchema.parse({ ...MODEL, id: 'vendor/vision', architecture: { input_modalities: ['text', 'image', 'file'], output_modalities: ['text'] } });
  const withPart = (part: Record<string, unknown>) => ({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, part] }] });
  const image = (url: unknown) => withPart({ type: 'image_url', image_url: { url } });
  const p = 'messages[0].content[1]';

  it.each<[string, Record<string, unknown>, typeof MODEL, string]>([
    ['an image on a text-only model', image('https://x/y.png'), MODEL, `${p}.type`],
    ['a file on a text-only model', withPart({ type: 'file', file: { file_data: 'data:application/pdf;base64,aGk=' } }), MODEL, `${p}.type`],
    ['audio on a model without audio input', withPart({ type: 'input_audio', input_audio: { data: 'aGk=', format: 'wav' } }), VISION, `${p}.type`],
    ['an unknown part type', withPart({ type: 'hologram' }), VISION, `${p}.type`],
    ['a text part without text', withPart({ type: 'text' }), VISION, `${p}.text`],
    ['an image_url that is not an object', withPart({ type: 'image_url', image_url: 'https://x/y.png' }), VISION, `${p}.image_url`],
    ['an image URL that is not http(s)', image('ftp://x/y.png'), VISION, `${p}.image_url.url`],
    ['a relative image URL', image('/y.png'), VISION, `${p}.image_url.url`],
    ['a data URL that is not an image', image('data:text/plain;base64,aGk='), VISION, `${p}.image_url.url`],
    ['a data URL that is not base64', image('data:image/png;base64,not base64!'), VISION, `${p}.image_url.url`],
    ['a data URL without the base64 marker', image('data:image/png,aGk='), VISION, `${p}.image_url.url`],
    ['an unknown file_id', withPart({ type: 'file', file: { file_id: 'file-abc' } }), VISION, `${p}.file.file_id`],
    ['malformed file_data', withPart({ type: 'file', file: { file_data: 'hello' } }), VISION, `${p}.file.file_data`],
  ])('%s', (_what, body, model, param) => {
    expect(refusal(body, model)).toMatchObject({ status: 400, param });
  });

  it.each<[string, Record<string, unknown>]>([
    ['an https image', image('https://x/y.png')],
    ['an image data URL', image('data:image/png;base64,iVBORw0KGgo=')],
    ['inline file data', withPart({ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } })],
  ])('%s on a model that takes it passes', (_what, body) => {
    expect(refusal(body, VISION)).toBeNull();
  });
});

describe('a field the chat request does not have is refused, never ignored', () => {
  it.each<[string, Record<string, unknown>, string, string]>([
    ['a misspelt parameter', { ...base, temperatur: 0.5 }, 'temperatur', 'Unknown parameter: temperatur'],
    ['a provider field outside extra_body', { ...base, safetySettings: [] }, 'safetySettings', 'Unknown parameter: safetySettings'],
    ['OpenAI\'s reasoning_effort', { ...base, reasoning_effort: 'high' }, 'reasoning_effort', 'Unknown parameter: reasoning_effort (set reasoning.effort)'],
    ['the legacy functions', { ...base, functions: [{ name: 'f' }] }, 'functions', 'Unknown parameter: functions (declare them in tools)'],
    ['the legacy function_call', { ...base, function_call: 'auto' }, 'function_call', 'Unknown parameter: function_call (set tool_choice)'],
    ['a field named __proto__', JSON.parse(`{"model":"${MODEL.id}","messages":[{"role":"user","content":"x"}],"__proto__":{"stream":true}}`), '__proto__', 'Unknown parameter: __proto__'],
  ])('%s', (_what, body, param, message) => {
    expect(refusal(body)).toMatchObject({ status: 400, param, code: 'unknown_parameter', message });
  });
});

describe('the chat API\'s own number ranges hold where the model bounds nothing', () => {
  const unbounded = { model: LIMITED_ONLY.id, messages: [user] };
  it.each<[string, Record<string, unknown>]>([
    ['temperature', { temperature: 2.01 }],
    ['temperature', { temperature: -0.01 }],
    ['top_p', { top_p: 1.5 }],
    ['top_p', { top_p: -1 }],
    ['frequency_penalty', { frequency_penalty: 2.5 }],
    ['presence_penalty', { presence_penalty: -3 }],
    ['top_logprobs', { logprobs: true, top_logprobs: 21 }],
    ['top_logprobs', { logprobs: true, top_logprobs: -1 }],
  ])('%s %j is a 400 naming it', (param, extra) => {
    expect(refusal({ ...unbounded, ...extra }, LIMITED_ONLY)).toMatchObject({ status: 400, param });
  });

  it('takes every range at its edges', () => {
    for (const edge of [
      { temperature: 0, top_p: 0, frequency_penalty: -2, presence_penalty: -2, logprobs: true, top_logprobs: 0 },
      { temperature: 2, top_p: 1, frequency_penalty: 2, presence_penalty: 2, logprobs: true, top_logprobs: 20 },
    ]) expect(refusal({ ...unbounded, ...edge }, LIMITED_ONLY)).toBeNull();
  });
});
