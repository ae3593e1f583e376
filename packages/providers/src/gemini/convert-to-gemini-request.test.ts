import type { ChatCompletionRequest } from '@gw/provider-spec';
import { convertToGeminiRequest } from './convert-to-gemini-request';

const base: ChatCompletionRequest = { model: 'public/model', messages: [{ role: 'user', content: 'hi' }] };
const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
const convert = (fields: Partial<ChatCompletionRequest>, model = 'gemini-2.5-flash') => convertToGeminiRequest({ ...base, ...fields }, model);

describe('convertToGeminiRequest', () => {
  it('sends only the contents for a bare request', () => {
    expect(convert({})).toEqual({ contents });
  });

  const generationConfig: Array<[keyof ChatCompletionRequest, Partial<ChatCompletionRequest>, Record<string, unknown>]> = [
    ['temperature', { temperature: 0.2 }, { temperature: 0.2 }],
    ['top_p', { top_p: 0.9 }, { topP: 0.9 }],
    ['top_k', { top_k: 40 }, { topK: 40 }],
    ['seed', { seed: 7 }, { seed: 7 }],
    ['presence_penalty', { presence_penalty: 0.5 }, { presencePenalty: 0.5 }],
    ['frequency_penalty', { frequency_penalty: -0.5 }, { frequencyPenalty: -0.5 }],
    ['max_completion_tokens', { max_completion_tokens: 100 }, { maxOutputTokens: 100 }],
    ['max_tokens', { max_tokens: 50 }, { maxOutputTokens: 50 }],
    ['max_completion_tokens', { max_tokens: 50, max_completion_tokens: 100 }, { maxOutputTokens: 100 }],
    ['n', { n: 3 }, { candidateCount: 3 }],
    ['stop', { stop: 'END' }, { stopSequences: ['END'] }],
    ['stop', { stop: ['\n\n', 'END'] }, { stopSequences: ['\n\n', 'END'] }],
    ['logprobs', { logprobs: true }, { responseLogprobs: true }],
    ['top_logprobs', { logprobs: true, top_logprobs: 3 }, { responseLogprobs: true, logprobs: 3 }],
    ['logprobs', { logprobs: false }, {}],
    ['response_format', { response_format: { type: 'text' } }, {}],
    ['response_format', { response_format: { type: 'json_object' } }, { responseMimeType: 'application/json' }],
    [
      'response_format',
      { response_format: { type: 'json_schema', json_schema: { name: 'r', strict: true, schema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } } } },
      { responseMimeType: 'application/json', responseSchema: { type: 'object', properties: { a: { type: 'string' } } } },
    ],
    ['reasoning', { reasoning: { effort: 'low' } }, { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } }],
    ['reasoning', { reasoning: { effort: 'high', max_tokens: 1000 } }, { thinkingConfig: { thinkingBudget: 1000, includeThoughts: true } }],
    ['reasoning', { reasoning: { effort: 'medium', exclude: true } }, { thinkingConfig: { thinkingBudget: 8192 } }],
    ['reasoning', { reasoning: { enabled: true } }, { thinkingConfig: { includeThoughts: true } }],
    ['reasoning', { reasoning: { enabled: false, effort: 'high' } }, { thinkingConfig: { thinkingBudget: 0 } }],
    ['reasoning', { reasoning: { effort: 'none' } }, { thinkingConfig: { thinkingBudget: 0 } }],
    ['reasoning', { reasoning: { exclude: true } }, {}],
  ];
  it.each(generationConfig)('maps %s %j into generationConfig', (_field, fields, expected) => {
    const body = convert(fields);
    expect(body.generationConfig ?? {}).toEqual(expected);
    expect(body.contents).toEqual(contents);
  });

  it.each<[keyof ChatCompletionRequest, unknown]>([
    ['stream', true],
    ['stream_options', { include_usage: true }],
    ['parallel_tool_calls', true],
    ['metadata', { user: 'u1' }],
  ])('does not send %s', (field, value) => {
    expect(convert({ [field]: value })).toEqual({ contents });
  });

  it('declares tools with their parameters converted', () => {
    const body = convert({
      tools: [
        { type: 'function', function: { name: 'search', description: 'web', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false } } },
        { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
      ],
    });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'search', description: 'web', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
          { name: 'now' },
        ],
      },
    ]);
  });

  const tools = [{ type: 'function', function: { name: 'search' } }];
  it.each([
    ['auto', 'auto' as const, { mode: 'AUTO' }],
    ['required', 'required' as const, { mode: 'ANY' }],
    ['none', 'none' as const, { mode: 'NONE' }],
    ['a named function', { type: 'function', function: { name: 'search' } }, { mode: 'ANY', allowedFunctionNames: ['search'] }],
  ])('maps tool_choice %s', (_name, toolChoice, expected) => {
    expect(convert({ tools, tool_choice: toolChoice }).toolConfig).toEqual({ functionCallingConfig: expected });
  });

  it.each([
    ['a tool type other than function', { tools: [{ type: 'web_search', function: { name: 'x' } }] }, 'tools[0].type'],
    ['tool_choice naming an unknown tool', { tools, tool_choice: { type: 'function', function: { name: 'other' } } }, 'tool_choice'],
    ['a recursive response schema', { response_format: { type: 'json_schema' as const, json_schema: { name: 'n', schema: { $ref: '#' } } } }, 'response_format.json_schema.schema'],
  ])('rejects %s with a 400 naming the param', (_name, fields, param) => {
    expect(() => convert(fields as Partial<ChatCompletionRequest>)).toThrow(expect.objectContaining({ status: 400, param }));
  });

  it.each<[keyof ChatCompletionRequest, unknown]>([
    ['user', 'end-user-1'],
    ['safety_identifier', 'hashed-user-1'],
  ])('reports %s as unsupported (Gemini has no end-user field)', (param, value) => {
    expect(() => convert({ [param]: value })).toThrow(expect.objectContaining({ status: 400, param, code: 'unsupported_parameter' }));
  });

  it('merges extra_body, its generationConfig into ours', () => {
    const safetySettings = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }];
    const body = convert({ temperature: 1, extra_body: { safetySettings, generationConfig: { responseModalities: ['TEXT'] } } });
    expect(body).toEqual({ contents, safetySettings, generationConfig: { temperature: 1, responseModalities: ['TEXT'] } });
  });

  it('forwards an extra_body field named __proto__ as a field, not as the body\'s prototype', () => {
    const body = convert({ extra_body: JSON.parse('{"__proto__":{"contents":[]},"cachedContent":"c"}') });
    expect(JSON.parse(JSON.stringify(body))).toEqual({ contents, ['__proto__']: { contents: [] }, cachedContent: 'c' });
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });

  it('signs replayed function calls only for Gemini 3 models', () => {
    const messages: ChatCompletionRequest['messages'] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    ];
    expect(convert({ messages }, 'gemini-3-pro-preview').contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
    expect(convert({ messages }, 'gemini-2.5-pro').contents[1].parts[0].thoughtSignature).toBeUndefined();
  });
});
