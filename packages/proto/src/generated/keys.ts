import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AuthenticateRequest as _gateway_keys_v1_AuthenticateRequest, AuthenticateRequest__Output as _gateway_keys_v1_AuthenticateRequest__Output } from './gateway/keys/v1/AuthenticateRequest';
import type { AuthenticateResponse as _gateway_keys_v1_AuthenticateResponse, AuthenticateResponse__Output as _gateway_keys_v1_AuthenticateResponse__Output } from './gateway/keys/v1/AuthenticateResponse';
import type { KeysServiceClient as _gateway_keys_v1_KeysServiceClient, KeysServiceDefinition as _gateway_keys_v1_KeysServiceDefinition } from './gateway/keys/v1/KeysService';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gateway: {
    keys: {
      v1: {
        AuthenticateRequest: MessageTypeDefinition<_gateway_keys_v1_AuthenticateRequest, _gateway_keys_v1_AuthenticateRequest__Output>
        AuthenticateResponse: MessageTypeDefinition<_gateway_keys_v1_AuthenticateResponse, _gateway_keys_v1_AuthenticateResponse__Output>
        KeysService: SubtypeConstructor<typeof grpc.Client, _gateway_keys_v1_KeysServiceClient> & { service: _gateway_keys_v1_KeysServiceDefinition }
      }
    }
  }
}

