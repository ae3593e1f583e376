import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType as HealthProto } from './generated/health';
import type { ProtoGrpcType as KeysProto } from './generated/keys';
import type { ProtoGrpcType as BillingProto } from './generated/billing';
import type { ProtoGrpcType as InferenceProto } from './generated/inference';

/**
 * Runtime loading of the contracts in `protos/` with the same options the types were generated with
 * (`pnpm --filter @gw/proto generate`): snake_case fields, int64 as number (USD micros stay far below 2^53).
 */
export const PROTO_ROOT = path.resolve(__dirname, '../../../protos');
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

function load<T>(file: string): T {
  return grpc.loadPackageDefinition(protoLoader.loadSync(file, LOADER_OPTIONS)) as unknown as T;
}

export const healthProto = load<HealthProto>('grpc/health/v1/health.proto');
export const keysProto = load<KeysProto>('gateway/keys/v1/keys.proto');
export const billingProto = load<BillingProto>('gateway/billing/v1/billing.proto');
export const inferenceProto = load<InferenceProto>('gateway/inference/v1/inference.proto');

export type { HealthClient, HealthHandlers } from './generated/grpc/health/v1/Health';
export type { KeysServiceClient, KeysServiceHandlers } from './generated/gateway/keys/v1/KeysService';
export type { AuthenticateResponse__Output as AuthenticateResult } from './generated/gateway/keys/v1/AuthenticateResponse';
export type { BillingServiceClient, BillingServiceHandlers } from './generated/gateway/billing/v1/BillingService';
export type { Balance, Balance__Output } from './generated/gateway/billing/v1/Balance';
export type { KeyUsage, KeyUsage__Output } from './generated/gateway/billing/v1/KeyUsage';
import type { UsageEvent__Output } from './generated/gateway/events/v1/UsageEvent';
import type { BalanceChanged__Output } from './generated/gateway/events/v1/BalanceChanged';
import type { KeyChanged__Output } from './generated/gateway/events/v1/KeyChanged';
import type { CallbackRequested__Output } from './generated/gateway/events/v1/CallbackRequested';
import type { CallArchived__Output } from './generated/gateway/events/v1/CallArchived';
import type { CallFailed__Output } from './generated/gateway/events/v1/CallFailed';
export type { UsageEvent__Output as UsageEvent } from './generated/gateway/events/v1/UsageEvent';
export type { Usage__Output as EventUsage } from './generated/gateway/events/v1/Usage';
export type { BalanceChanged__Output as BalanceChanged } from './generated/gateway/events/v1/BalanceChanged';
export type { KeySpend__Output as KeySpend } from './generated/gateway/events/v1/KeySpend';
export type { KeyChanged__Output as KeyChanged } from './generated/gateway/events/v1/KeyChanged';
export type { CallbackRequested__Output as CallbackRequested } from './generated/gateway/events/v1/CallbackRequested';
export type { CallArchived__Output as CallArchived } from './generated/gateway/events/v1/CallArchived';
export type { CallFailed__Output as CallFailed } from './generated/gateway/events/v1/CallFailed';

/** Bus topics (each carries the JSON encoding of one events.proto message, see TopicMessages). */
export const TOPICS = {
  usage: 'gateway.usage.v1',
  balance: 'gateway.balance.v1',
  keys: 'gateway.keys.v1',
  callbacks: 'gateway.callbacks.v1',
  archive: 'gateway.archive.v1',
  callFailures: 'gateway.call-failures.v1',
} as const;

/** Each topic's message type: services narrow their bus to it (`TypedBus<TopicMessages>` in @gw/bus). */
export interface TopicMessages {
  [TOPICS.usage]: UsageEvent__Output;
  [TOPICS.balance]: BalanceChanged__Output;
  [TOPICS.keys]: KeyChanged__Output;
  [TOPICS.callbacks]: CallbackRequested__Output;
  [TOPICS.archive]: CallArchived__Output;
  [TOPICS.callFailures]: CallFailed__Output;
}
export type { PreauthorizeRequest } from './generated/gateway/billing/v1/PreauthorizeRequest';
export type { PreauthorizeResponse__Output as PreauthorizeResult } from './generated/gateway/billing/v1/PreauthorizeResponse';
export type { ReserveRequest } from './generated/gateway/billing/v1/ReserveRequest';
export type { ReserveResponse__Output as ReserveResult } from './generated/gateway/billing/v1/ReserveResponse';
export type { ReleaseRequest } from './generated/gateway/billing/v1/ReleaseRequest';
export type { ReleaseResponse__Output as ReleaseResult } from './generated/gateway/billing/v1/ReleaseResponse';
export type { InferenceClient, InferenceHandlers } from './generated/gateway/inference/v1/Inference';
export type { CreateChatCompletionRequest__Output as CreateChatCompletionRequest } from './generated/gateway/inference/v1/CreateChatCompletionRequest';
export type { CreateChatCompletionResponse__Output as CreateChatCompletionResponse } from './generated/gateway/inference/v1/CreateChatCompletionResponse';
export type { StreamChatCompletionRequest__Output as StreamChatCompletionRequest } from './generated/gateway/inference/v1/StreamChatCompletionRequest';
export type { StreamChatCompletionResponse__Output as StreamChatCompletionResponse } from './generated/gateway/inference/v1/StreamChatCompletionResponse';
export type { Usage__Output as InferenceUsage } from './generated/gateway/inference/v1/Usage';
export type { Cost__Output as InferenceCost } from './generated/gateway/inference/v1/Cost';
