import { InputError } from '@gw/platform';
import { validateMessagesRequest } from './messages-rules';

const nested = (levels: number) => { let v: object = {}; for (let i = 0; i < levels; i++) v = { a: v }; return v; };
const BASE = { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

describe('validateMessagesRequest', () => {
  it.each([
    ['a plain message', {}],
    ['content blocks and a system prompt', { system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'assistant', content: 'hey' }] }],
    ['stream and fields the provider judges', { stream: true, thinking: { type: 'enabled', budget_tokens: 1024 }, tools: [] }],
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
    ['a fractional max_tokens', { ...BASE, max_tokens: 2.5 }, 'max_tokens'],
    ['max_tokens as a string', { ...BASE, max_tokens: '64' }, 'max_tokens'],
    ['stream that is not a boolean', { ...BASE, stream: 1 }, 'stream'],
    ['metadata that is a string', { ...BASE, metadata: 'x' }, 'metadata'],
    ['metadata nested 5,000 levels', { ...BASE, metadata: nested(5000) }, 'metadata'],
    ['a tool input_schema nested 5,000 levels', { ...BASE, tools: [{ name: 't', input_schema: nested(5000) }] }, 'tools[0].input_schema'],
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
