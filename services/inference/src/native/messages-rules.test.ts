import { InputError } from '@gw/platform';
import { validateMessagesRequest } from './messages-rules';

const nested = (levels: number) => { let v: object = {}; for (let i = 0; i < levels; i++) v = { a: v }; return v; };
const BASE = { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

describe('validateMessagesRequest', () => {
  it.each([
    ['a plain message', {}],
    ['content blocks and a system prompt', { system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: 'hey' }] }],
    ['stream and fields the provider judges', { stream: true, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [] }],
    ['every documented field at its bounds', {
      system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }], temperature: 1, top_p: 0, top_k: 0, stop_sequences: ['\n\nHuman:'],
      metadata: { user_id: 'u'.repeat(256) }, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }, { type: 'custom', name: 'm'.repeat(128), input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search' }],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true }, thinking: { type: 'disabled' },
    }],
    ['nulls for optional fields', { system: null, temperature: null, stop_sequences: null, tool_choice: null, thinking: null }],
  ])('accepts %s', (_name, fields) => {
    const body = { ...BASE, ...fields };
    expect(validateMessagesRequest(body)).toBe(body);
  });

  it.each([
    ['a body that is not an object', 'hi', 'body'],
    ['no model', { ...BASE, model: undefined }, 'model'],
    ['no messages', { ...BASE, messages: undefined }, 'messages'],
    ['empty messages', { ...BASE, messages: [] }, 'messages'],
    ['a message that is not an object', { ...BASE, messages: ['hi'] }, 'messages[0]'],
    ['a system role in messages', { ...BASE, messages: [{ role: 'system', content: 'x' }] }, 'messages[0].role'],
    ['message content that is a number', { ...BASE, messages: [{ role: 'user', content: 1 }] }, 'messages[0].content'],
    ['no max_tokens', { ...BASE, max_tokens: undefined }, 'max_tokens'],
    ['max_tokens of 0', { ...BASE, max_tokens: 0 }, 'max_tokens'],
    ['a max_tokens past 2^53, which JSON.parse has rounded', { ...BASE, max_tokens: 2 ** 60 }, 'max_tokens'],
    ['a fractional max_tokens', { ...BASE, max_tokens: 2.5 }, 'max_tokens'],
    ['max_tokens as a string', { ...BASE, max_tokens: '64' }, 'max_tokens'],
    ['stream that is not a boolean', { ...BASE, stream: 1 }, 'stream'],
    ['metadata that is a string', { ...BASE, metadata: 'x' }, 'metadata'],
    ['metadata nested 5,000 levels', { ...BASE, metadata: nested(5000) }, 'metadata'],
    ['a tool input_schema nested 5,000 levels', { ...BASE, tools: [{ name: 't', input_schema: nested(5000) }] }, 'tools[0].input_schema'],
    ['a text block without text', { ...BASE, messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text' }] }] }, 'messages[0].content[1].text'],
    ['a content block without a type', { ...BASE, messages: [{ role: 'user', content: ['hi'] }] }, 'messages[0].content[0].type'],
    ['a system prompt that is a number', { ...BASE, system: 5 }, 'system'],
    ['a system block without text', { ...BASE, system: [{ type: 'text' }] }, 'system[0].text'],
    ['temperature above 1', { ...BASE, temperature: 1.5 }, 'temperature'],
    ['top_p above 1', { ...BASE, top_p: 2 }, 'top_p'],
    ['a negative top_k', { ...BASE, top_k: -3 }, 'top_k'],
    ['stop_sequences as a string', { ...BASE, stop_sequences: 'x' }, 'stop_sequences'],
    ['a metadata.user_id that is a number', { ...BASE, metadata: { user_id: 5 } }, 'metadata.user_id'],
    ['a metadata.user_id of 257 characters', { ...BASE, metadata: { user_id: 'u'.repeat(257) } }, 'metadata.user_id'],
    ['tools that is an object', { ...BASE, tools: { name: 't' } }, 'tools'],
    ['a tool without a name', { ...BASE, tools: [{ input_schema: { type: 'object' } }] }, 'tools[0].name'],
    ['a tool name with a dot', { ...BASE, tools: [{ name: 'fs.read', input_schema: { type: 'object' } }] }, 'tools[0].name'],
    ['a custom tool name of 129 characters', { ...BASE, tools: [{ type: 'custom', name: 't'.repeat(129), input_schema: { type: 'object' } }] }, 'tools[0].name'],
    ['a tool without an input_schema', { ...BASE, tools: [{ name: 'lookup' }] }, 'tools[0].input_schema'],
    ['a tool_choice string', { ...BASE, tool_choice: 'auto' }, 'tool_choice'],
    ['an unknown tool_choice type', { ...BASE, tool_choice: { type: 'always' } }, 'tool_choice.type'],
    ['a tool_choice naming a tool tools does not declare', { ...BASE, tools: [{ name: 'lookup', input_schema: {} }], tool_choice: { type: 'tool', name: 'search' } }, 'tool_choice.name'],
    ['a thinking budget under 1,024', { ...BASE, thinking: { type: 'enabled', budget_tokens: 10 } }, 'thinking.budget_tokens'],
    ['thinking enabled without a budget', { ...BASE, thinking: { type: 'enabled' } }, 'thinking.budget_tokens'],
    ['a message nested 5,000 levels', { ...BASE, messages: [{ role: 'user', content: [{ type: 'text', text: 'x', deep: nested(5000) }] }] }, 'messages'],
  ])('answers 400 for %s, naming the param', (_name, body, param) => {
    let err: unknown;
    try {
      validateMessagesRequest(body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ status: 400, param });
  });
});
