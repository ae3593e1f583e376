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
});
