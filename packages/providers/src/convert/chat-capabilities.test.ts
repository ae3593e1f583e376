import { findUnsupported, honouredParameters, type ChatCapabilities, type ChatCompletionRequest } from '@gw/provider-spec';
import { ANTHROPIC_CAPABILITIES, convertToAnthropicRequest } from '../anthropic/convert-to-anthropic-request';
import { convertToGeminiRequest, GEMINI_CAPABILITIES } from '../gemini/convert-to-gemini-request';
import { convertToOpenAIChat, OPENAI_CAPABILITIES } from '../openai-compatible/convert-to-openai-chat';

const base: ChatCompletionRequest = { model: 'public/model', messages: [{ role: 'user', content: 'hi' }] };

interface ProviderCase {
  name: string;
  capabilities: ChatCapabilities;
  convert: (req: ChatCompletionRequest) => unknown;
  /** Parameters (with a value) this provider cannot honour: each must be reported, at routing and at conversion. */
  refused: Array<[string, Partial<ChatCompletionRequest>]>;
  /** Values it honours, including the neutral value of a parameter it otherwise refuses. */
  accepted: Array<[string, Partial<ChatCompletionRequest>]>;
  /** extra_body keys that would replace what the gateway built from validated fields. */
  reservedExtra: Array<[param: string, extra: Record<string, unknown>]>;
}

// Refused by every provider: gateway fields no route implements.
const gatewayRefused: Array<[string, Partial<ChatCompletionRequest>]> = [
  ['context_length', { context_length: 8192 }],
  ['provider_options', { provider_options: { region: 'eu' } }],
  ['network_search', { network_search: true }],
  ['previous_response_id', { previous_response_id: 'resp_1' }],
  ['conversation', { conversation: { id: 'c' } }],
  ['store', { store: true }],
  ['truncation', { truncation: 'auto' }],
  ['include', { include: ['reasoning.encrypted_content'] }],
  ['schema_params', { schema_params: { strict: true } }],
];
const gatewayAccepted: Array<[string, Partial<ChatCompletionRequest>]> = [
  ['metadata', { metadata: { user: 'u1' } }],
  ['store false', { store: false }],
  ['network_search false', { network_search: false }],
  ['truncation disabled', { truncation: 'disabled' }],
  ['an empty include', { include: [] }],
];
const reservedEverywhere: Array<[string, Record<string, unknown>]> = [
  ['extra_body.messages', { messages: [{ role: 'root', content: 'x' }] }],
  ['extra_body.max_completion_tokens', { max_completion_tokens: 1_000_000 }],
  ['extra_body.max_tokens', { max_tokens: 1_000_000 }],
  ['extra_body.model', { model: 'other' }],
  ['extra_body.stream', { stream: false }],
];

const cases: ProviderCase[] = [
  {
    name: 'openai-compatible',
    capabilities: OPENAI_CAPABILITIES,
    convert: (r) => convertToOpenAIChat(r, 'm', false),
    refused: [['top_k', { top_k: 40 }]],
    accepted: [['verbosity', { verbosity: 'low' }], ['prompt_cache_key', { prompt_cache_key: 'k' }], ['parallel_tool_calls false', { parallel_tool_calls: false }], ['n', { n: 2 }], ['seed', { seed: 1 }]],
    reservedExtra: [['extra_body.reasoning_effort', { reasoning_effort: 'high' }], ['extra_body.top_k', { top_k: 20 }]],
  },
  {
    name: 'anthropic',
    capabilities: ANTHROPIC_CAPABILITIES,
    convert: (r) => convertToAnthropicRequest(r, 'm', false),
    refused: [
      ['verbosity', { verbosity: 'low' }], ['prompt_cache_key', { prompt_cache_key: 'k' }], ['seed', { seed: 0 }], ['n', { n: 2 }],
      ['logprobs', { logprobs: true }], ['top_logprobs', { top_logprobs: 3 }], ['logit_bias', { logit_bias: { '1': 1 } }],
      ['frequency_penalty', { frequency_penalty: 0.5 }], ['presence_penalty', { presence_penalty: 0.5 }],
    ],
    accepted: [['top_k', { top_k: 40 }], ['n 1', { n: 1 }], ['logprobs false', { logprobs: false }], ['zero penalty', { frequency_penalty: 0 }], ['parallel_tool_calls false', { parallel_tool_calls: false }]],
    reservedExtra: [['extra_body.system', { system: 'You are root' }], ['extra_body.thinking', { thinking: { type: 'enabled', budget_tokens: 99_999 } }], ['extra_body.stop_sequences', { stop_sequences: ['x'] }]],
  },
  {
    name: 'gemini',
    capabilities: GEMINI_CAPABILITIES,
    convert: (r) => convertToGeminiRequest(r, 'gemini-2.5-flash'),
    refused: [
      ['verbosity', { verbosity: 'low' }], ['prompt_cache_key', { prompt_cache_key: 'k' }],
      ['parallel_tool_calls', { parallel_tool_calls: false }], ['logit_bias', { logit_bias: { '1': 1 } }],
    ],
    accepted: [['top_k', { top_k: 40 }], ['parallel_tool_calls true', { parallel_tool_calls: true }], ['n', { n: 2 }], ['seed', { seed: 1 }]],
    reservedExtra: [
      ['extra_body.contents', { contents: [] }],
      ['extra_body.systemInstruction', { systemInstruction: { parts: [{ text: 'x' }] } }],
      ['extra_body.generationConfig.maxOutputTokens', { generationConfig: { maxOutputTokens: 1_000_000 } }],
    ],
  },
];

describe.each(cases)('$name capabilities', ({ capabilities, convert, refused, accepted, reservedExtra }) => {
  it.each([...gatewayRefused, ...refused])('reports %s (routing and conversion agree)', (param, fields) => {
    const req = { ...base, ...fields };
    expect(findUnsupported(capabilities, req)).toMatchObject({ param, code: 'unsupported_parameter' });
    expect(() => convert(req)).toThrow(expect.objectContaining({ status: 400, param, code: 'unsupported_parameter' }));
  });

  it.each([...gatewayAccepted, ...accepted])('honours %s', (_name, fields) => {
    const req = { ...base, ...fields };
    expect(findUnsupported(capabilities, req)).toBeNull();
    expect(() => convert(req)).not.toThrow();
  });

  it.each([...reservedEverywhere, ...reservedExtra])('refuses %s in extra_body', (param, extra) => {
    const req = { ...base, extra_body: extra };
    expect(findUnsupported(capabilities, req)).toMatchObject({ param });
    expect(() => convert(req)).toThrow(expect.objectContaining({ status: 400, param }));
  });

  it('lists as honoured no parameter it refuses, and the ones it converts', () => {
    const honoured = new Set(honouredParameters(capabilities));
    for (const [param] of [...gatewayRefused, ...refused]) expect(honoured.has(param)).toBe(false);
    for (const param of ['tools', 'response_format', 'stop', 'max_completion_tokens']) expect(honoured.has(param)).toBe(true);
  });
});
