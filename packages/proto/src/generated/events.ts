import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { BalanceChanged as _gateway_events_v1_BalanceChanged, BalanceChanged__Output as _gateway_events_v1_BalanceChanged__Output } from './gateway/events/v1/BalanceChanged';
import type { CallArchived as _gateway_events_v1_CallArchived, CallArchived__Output as _gateway_events_v1_CallArchived__Output } from './gateway/events/v1/CallArchived';
import type { CallFailed as _gateway_events_v1_CallFailed, CallFailed__Output as _gateway_events_v1_CallFailed__Output } from './gateway/events/v1/CallFailed';
import type { CallbackRequested as _gateway_events_v1_CallbackRequested, CallbackRequested__Output as _gateway_events_v1_CallbackRequested__Output } from './gateway/events/v1/CallbackRequested';
import type { KeyChanged as _gateway_events_v1_KeyChanged, KeyChanged__Output as _gateway_events_v1_KeyChanged__Output } from './gateway/events/v1/KeyChanged';
import type { KeySpend as _gateway_events_v1_KeySpend, KeySpend__Output as _gateway_events_v1_KeySpend__Output } from './gateway/events/v1/KeySpend';
import type { Usage as _gateway_events_v1_Usage, Usage__Output as _gateway_events_v1_Usage__Output } from './gateway/events/v1/Usage';
import type { UsageEvent as _gateway_events_v1_UsageEvent, UsageEvent__Output as _gateway_events_v1_UsageEvent__Output } from './gateway/events/v1/UsageEvent';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gateway: {
    events: {
      v1: {
        BalanceChanged: MessageTypeDefinition<_gateway_events_v1_BalanceChanged, _gateway_events_v1_BalanceChanged__Output>
        CallArchived: MessageTypeDefinition<_gateway_events_v1_CallArchived, _gateway_events_v1_CallArchived__Output>
        CallFailed: MessageTypeDefinition<_gateway_events_v1_CallFailed, _gateway_events_v1_CallFailed__Output>
        CallbackRequested: MessageTypeDefinition<_gateway_events_v1_CallbackRequested, _gateway_events_v1_CallbackRequested__Output>
        KeyChanged: MessageTypeDefinition<_gateway_events_v1_KeyChanged, _gateway_events_v1_KeyChanged__Output>
        KeySpend: MessageTypeDefinition<_gateway_events_v1_KeySpend, _gateway_events_v1_KeySpend__Output>
        Usage: MessageTypeDefinition<_gateway_events_v1_Usage, _gateway_events_v1_Usage__Output>
        UsageEvent: MessageTypeDefinition<_gateway_events_v1_UsageEvent, _gateway_events_v1_UsageEvent__Output>
      }
    }
  }
}

