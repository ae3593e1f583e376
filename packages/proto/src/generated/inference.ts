import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Cost as _gateway_inference_v1_Cost, Cost__Output as _gateway_inference_v1_Cost__Output } from './gateway/inference/v1/Cost';
import type { CreateChatCompletionRequest as _gateway_inference_v1_CreateChatCompletionRequest, CreateChatCompletionRequest__Output as _gateway_inference_v1_CreateChatCompletionRequest__Output } from './gateway/inference/v1/CreateChatCompletionRequest';
import type { CreateChatCompletionResponse as _gateway_inference_v1_CreateChatCompletionResponse, CreateChatCompletionResponse__Output as _gateway_inference_v1_CreateChatCompletionResponse__Output } from './gateway/inference/v1/CreateChatCompletionResponse';
import type { InferenceClient as _gateway_inference_v1_InferenceClient, InferenceDefinition as _gateway_inference_v1_InferenceDefinition } from './gateway/inference/v1/Inference';
import type { StreamChatCompletionRequest as _gateway_inference_v1_StreamChatCompletionRequest, StreamChatCompletionRequest__Output as _gateway_inference_v1_StreamChatCompletionRequest__Output } from './gateway/inference/v1/StreamChatCompletionRequest';
import type { StreamChatCompletionResponse as _gateway_inference_v1_StreamChatCompletionResponse, StreamChatCompletionResponse__Output as _gateway_inference_v1_StreamChatCompletionResponse__Output } from './gateway/inference/v1/StreamChatCompletionResponse';
import type { StreamSummary as _gateway_inference_v1_StreamSummary, StreamSummary__Output as _gateway_inference_v1_StreamSummary__Output } from './gateway/inference/v1/StreamSummary';
import type { Usage as _gateway_inference_v1_Usage, Usage__Output as _gateway_inference_v1_Usage__Output } from './gateway/inference/v1/Usage';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gateway: {
    inference: {
      v1: {
        Cost: MessageTypeDefinition<_gateway_inference_v1_Cost, _gateway_inference_v1_Cost__Output>
        CreateChatCompletionRequest: MessageTypeDefinition<_gateway_inference_v1_CreateChatCompletionRequest, _gateway_inference_v1_CreateChatCompletionRequest__Output>
        CreateChatCompletionResponse: MessageTypeDefinition<_gateway_inference_v1_CreateChatCompletionResponse, _gateway_inference_v1_CreateChatCompletionResponse__Output>
        Inference: SubtypeConstructor<typeof grpc.Client, _gateway_inference_v1_InferenceClient> & { service: _gateway_inference_v1_InferenceDefinition }
        StreamChatCompletionRequest: MessageTypeDefinition<_gateway_inference_v1_StreamChatCompletionRequest, _gateway_inference_v1_StreamChatCompletionRequest__Output>
        StreamChatCompletionResponse: MessageTypeDefinition<_gateway_inference_v1_StreamChatCompletionResponse, _gateway_inference_v1_StreamChatCompletionResponse__Output>
        StreamSummary: MessageTypeDefinition<_gateway_inference_v1_StreamSummary, _gateway_inference_v1_StreamSummary__Output>
        Usage: MessageTypeDefinition<_gateway_inference_v1_Usage, _gateway_inference_v1_Usage__Output>
      }
    }
  }
}

