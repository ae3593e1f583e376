import { schemaDrift } from '@gw/proto/src/testing/schema-drift';
import { callbackRequestedSchema } from './callback-intake';

// The proto (protos/gateway/events/v1/events.proto) defines the callback event; the consumer's parser follows it.
describe('the callback event schema follows events.proto', () => {
  test('CallbackRequested: same fields both ways, same types, same optionality', () => {
    const base = { event_id: 'batch_1:batch.completed', account_id: 'acct_a', kind: 'batch', event: 'batch.completed', body_json: '{}' };
    expect(schemaDrift('gateway.events.v1.CallbackRequested', callbackRequestedSchema, {
      base, requiredBeyondProto: ['event_id', 'account_id', 'kind', 'event', 'body_json'],
    })).toEqual([]);
  });

  test.each([
    ['a W3C traceparent is kept', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['a malformed one is dropped (the delivery starts a trace of its own)', '00-nothex-01', ''],
    ['an uppercase one is not W3C', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01', ''],
    ['an overlong one is dropped, the event kept', `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01${'0'.repeat(10_000)}`, ''],
  ])('traceparent: %s', (_name, given, kept) => {
    const event = { event_id: 'e', account_id: 'a', kind: 'batch', event: 'batch.completed', body_json: '{}', traceparent: given };
    expect(callbackRequestedSchema.parse(event).traceparent).toBe(kept);
  });
});
