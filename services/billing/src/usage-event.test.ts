import { z } from 'zod';
import { schemaDrift } from '@gw/proto/src/testing/schema-drift';
import { usageEventSchema, usageSchema } from './usage-event';

// The proto (protos/gateway/events/v1/events.proto) defines the usage event; billing's parser must follow it.
const EVENT = 'gateway.events.v1.UsageEvent';
const USAGE = 'gateway.events.v1.Usage';
const base = { request_id: 'br-1', account_id: 'acct_a' };
const required = ['request_id', 'account_id'];

describe('the usage event schema follows events.proto', () => {
  test('UsageEvent: same fields both ways, same types, same optionality', () => {
    expect(schemaDrift(EVENT, usageEventSchema, { base, requiredBeyondProto: required })).toEqual([]);
  });

  test('Usage: same fields both ways, same types, presence kept', () => {
    expect(schemaDrift(USAGE, usageSchema, { base: {} })).toEqual([]);
  });
});

describe('the drift check fails on drift', () => {
  test.each([
    ['a proto field dropped', usageEventSchema.omit({ served_model: true }), /served_model: in UsageEvent, not in the schema/],
    ['a field the proto lacks', usageEventSchema.extend({ region: z.string().nullish() }), /region: in the schema, not in UsageEvent/],
    ['a field of another type', usageEventSchema.extend({ streamed: z.string().nullish() }), /streamed: refuses true/],
    ['a looser type', usageEventSchema.extend({ latency_ms: z.union([z.number(), z.string()]).nullish() }), /latency_ms: accepts "seven"/],
    ['a zero value lost', usageEventSchema.extend({ status: z.string().nullish() }), /status: absent reads as undefined, not the proto zero value ""/],
  ])('%s', (_name, drifted, expected) => {
    expect(schemaDrift(EVENT, drifted, { base, requiredBeyondProto: required }).join('\n')).toMatch(expected);
  });

  test('a field made required', () => {
    const drifted = usageEventSchema.extend({ model: z.string() });
    expect(schemaDrift(EVENT, drifted, { base: { ...base, model: 'm' }, requiredBeyondProto: required }).join('\n')).toMatch(/model: refused when absent/);
  });

  test('presence lost in a nested message', () => {
    const drifted = usageSchema.extend({ prompt_tokens: z.number().int().nullish().transform((v) => v ?? 0) });
    expect(schemaDrift(USAGE, drifted, { base: {} }).join('\n')).toMatch(/prompt_tokens: absent reads as 0; the proto field has presence/);
  });
});

describe('trace_id', () => {
  test('a W3C trace id is kept for the billing record; anything else is dropped, never a refused charge', () => {
    expect(usageEventSchema.parse({ ...base, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' }).trace_id).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(usageEventSchema.parse({ ...base, trace_id: 'not a trace id' }).trace_id).toBe('');
    expect(usageEventSchema.parse(base).trace_id).toBe('');
  });
});
