// Original file: ../../protos/gateway/inference/v1/inference.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CreateChatCompletionRequest as _gateway_inference_v1_CreateChatCompletionRequest, CreateChatCompletionRequest__Output as _gateway_inference_v1_CreateChatCompletionRequest__Output } from '../../../gateway/inference/v1/CreateChatCompletionRequest';
import type { CreateChatCompletionResponse as _gateway_inference_v1_CreateChatCompletionResponse, CreateChatCompletionResponse__Output as _gateway_inference_v1_CreateChatCompletionResponse__Output } from '../../../gateway/inference/v1/CreateChatCompletionResponse';
import type { StreamChatCompletionRequest as _gateway_inference_v1_StreamChatCompletionRequest, StreamChatCompletionRequest__Output as _gateway_inference_v1_StreamChatCompletionRequest__Output } from '../../../gateway/inference/v1/StreamChatCompletionRequest';
import type { StreamChatCompletionResponse as _gateway_inference_v1_StreamChatCompletionResponse, StreamChatCompletionResponse__Output as _gateway_inference_v1_StreamChatCompletionResponse__Output } from '../../../gateway/inference/v1/StreamChatCompletionResponse';

export interface InferenceClient extends grpc.Client {
  /**
   * One chat completion. The body must not ask for a stream (`"stream": true` is INVALID_ARGUMENT, param
   * `stream`: use StreamChatCompletion).
   */
  CreateChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  CreateChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  CreateChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  CreateChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  /**
   * One chat completion. The body must not ask for a stream (`"stream": true` is INVALID_ARGUMENT, param
   * `stream`: use StreamChatCompletion).
   */
  createChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  createChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  createChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  createChatCompletion(argument: _gateway_inference_v1_CreateChatCompletionRequest, callback: grpc.requestCallback<_gateway_inference_v1_CreateChatCompletionResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One streamed chat completion: a `chunk_json` message per chunk, then one `summary` message. Cancelling
   * the call bills what was generated until then, as a client leaving an HTTP stream does.
   */
  StreamChatCompletion(argument: _gateway_inference_v1_StreamChatCompletionRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_gateway_inference_v1_StreamChatCompletionResponse__Output>;
  StreamChatCompletion(argument: _gateway_inference_v1_StreamChatCompletionRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_gateway_inference_v1_StreamChatCompletionResponse__Output>;
  /**
   * One streamed chat completion: a `chunk_json` message per chunk, then one `summary` message. Cancelling
   * the call bills what was generated until then, as a client leaving an HTTP stream does.
   */
  streamChatCompletion(argument: _gateway_inference_v1_StreamChatCompletionRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_gateway_inference_v1_StreamChatCompletionResponse__Output>;
  streamChatCompletion(argument: _gateway_inference_v1_StreamChatCompletionRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_gateway_inference_v1_StreamChatCompletionResponse__Output>;
  
}

export interface InferenceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * One chat completion. The body must not ask for a stream (`"stream": true` is INVALID_ARGUMENT, param
   * `stream`: use StreamChatCompletion).
   */
  CreateChatCompletion: grpc.handleUnaryCall<_gateway_inference_v1_CreateChatCompletionRequest__Output, _gateway_inference_v1_CreateChatCompletionResponse>;
  
  /**
   * One streamed chat completion: a `chunk_json` message per chunk, then one `summary` message. Cancelling
   * the call bills what was generated until then, as a client leaving an HTTP stream does.
   */
  StreamChatCompletion: grpc.handleServerStreamingCall<_gateway_inference_v1_StreamChatCompletionRequest__Output, _gateway_inference_v1_StreamChatCompletionResponse>;
  
}

export interface InferenceDefinition extends grpc.ServiceDefinition {
  CreateChatCompletion: MethodDefinition<_gateway_inference_v1_CreateChatCompletionRequest, _gateway_inference_v1_CreateChatCompletionResponse, _gateway_inference_v1_CreateChatCompletionRequest__Output, _gateway_inference_v1_CreateChatCompletionResponse__Output>
  StreamChatCompletion: MethodDefinition<_gateway_inference_v1_StreamChatCompletionRequest, _gateway_inference_v1_StreamChatCompletionResponse, _gateway_inference_v1_StreamChatCompletionRequest__Output, _gateway_inference_v1_StreamChatCompletionResponse__Output>
}
