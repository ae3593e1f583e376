import { GatewayError } from './errors';
import { rejectUnknownFields } from './unknown-fields';

const KNOWN = new Set(['model', 'messages']);
const HINTS = { reasoning_effort: 'set reasoning.effort instead' };

function refusal(body: Record<string, unknown>): GatewayError | null {
  try {
    rejectUnknownFields(body, KNOWN, HINTS);
    return null;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
}

describe('rejectUnknownFields', () => {
  it('takes a body of known fields only', () => {
    expect(refusal({ model: 'm', messages: [] })).toBeNull();
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['a misspelt field', { model: 'm', temperatur: 1 }, 'temperatur', 'Unknown parameter: temperatur'],
    ['a field with a hint', { reasoning_effort: 'high' }, 'reasoning_effort', 'Unknown parameter: reasoning_effort (set reasoning.effort instead)'],
    // An own "__proto__" (as JSON.parse makes one) and a name the hints object inherits are fields like any other.
    ['an own __proto__ field', JSON.parse('{"__proto__":{"model":"x"}}'), '__proto__', 'Unknown parameter: __proto__'],
    ['a field named like an Object method', { toString: 'x' }, 'toString', 'Unknown parameter: toString'],
  ])('refuses %s with a 400 naming it', (_what, body, param, message) => {
    expect(refusal(body)).toMatchObject({ status: 400, param, code: 'unknown_parameter', message });
  });
});
