// Original file: ../../protos/gateway/keys/v1/keys.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AuthenticateRequest as _gateway_keys_v1_AuthenticateRequest, AuthenticateRequest__Output as _gateway_keys_v1_AuthenticateRequest__Output } from '../../../gateway/keys/v1/AuthenticateRequest';
import type { AuthenticateResponse as _gateway_keys_v1_AuthenticateResponse, AuthenticateResponse__Output as _gateway_keys_v1_AuthenticateResponse__Output } from '../../../gateway/keys/v1/AuthenticateResponse';

export interface KeysServiceClient extends grpc.Client {
  /**
   * Validates a caller's API key secret. Unknown, disabled or expired keys fail with UNAUTHENTICATED.
   */
  Authenticate(argument: _gateway_keys_v1_AuthenticateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  Authenticate(argument: _gateway_keys_v1_AuthenticateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  Authenticate(argument: _gateway_keys_v1_AuthenticateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  Authenticate(argument: _gateway_keys_v1_AuthenticateRequest, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Validates a caller's API key secret. Unknown, disabled or expired keys fail with UNAUTHENTICATED.
   */
  authenticate(argument: _gateway_keys_v1_AuthenticateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  authenticate(argument: _gateway_keys_v1_AuthenticateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  authenticate(argument: _gateway_keys_v1_AuthenticateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  authenticate(argument: _gateway_keys_v1_AuthenticateRequest, callback: grpc.requestCallback<_gateway_keys_v1_AuthenticateResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface KeysServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Validates a caller's API key secret. Unknown, disabled or expired keys fail with UNAUTHENTICATED.
   */
  Authenticate: grpc.handleUnaryCall<_gateway_keys_v1_AuthenticateRequest__Output, _gateway_keys_v1_AuthenticateResponse>;
  
}

export interface KeysServiceDefinition extends grpc.ServiceDefinition {
  Authenticate: MethodDefinition<_gateway_keys_v1_AuthenticateRequest, _gateway_keys_v1_AuthenticateResponse, _gateway_keys_v1_AuthenticateRequest__Output, _gateway_keys_v1_AuthenticateResponse__Output>
}
