import * as grpc from '@grpc/grpc-js';
import { authenticatedUnaryHandler, newTraceId, toGrpcError, type GrpcCallAuthenticator, type Logger } from '@gw/platform';
import type { InferenceHandlers, StreamChatCompletionResponse } from '@gw/proto';
import type { GrpcChat, GrpcChatRequest, StreamSink } from './grpc-chat';

type StreamCall = grpc.ServerWritableStream<GrpcChatRequest, StreamChatCompletionResponse>;

/** A caller's trace id is kept when it has the platform's shape (it only labels logs); otherwise one is made. */
function traceIdOf(metadata: grpc.Metadata): string {
  const given = metadata.get('x-trace-id')[0];
  return typeof given === 'string' && /^[0-9a-f]{32}$/.test(given) ? given : newTraceId();
}

/** gateway.inference.v1.Inference: every call authenticated (API key or service identity); typed errors keep their class. */
export function inferenceGrpcHandlers(chat: GrpcChat, auth: GrpcCallAuthenticator, logger: Logger): InferenceHandlers {
  return {
    CreateChatCompletion: authenticatedUnaryHandler(logger, auth, async (req, caller, call) => {
      // A client that cancels (or whose deadline passes) aborts the upstream call; nothing is billed then.
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort());
      return chat.complete(req, caller, traceIdOf(call.metadata), abort.signal);
    }),
    StreamChatCompletion: (call: StreamCall) => {
      const sink = writableSink(call);
      auth.authenticate(call)
        .then((caller) => chat.stream(call.request, caller, traceIdOf(call.metadata), sink))
        .then(
          () => { if (!sink.clientGone) call.end(); },
          (err: unknown) => {
            const status = toGrpcError(err);
            if (status.code === grpc.status.INTERNAL) logger.error({ err }, 'grpc stream failed');
            if (!sink.clientGone) call.emit('error', status);
          },
        );
    },
  };
}

/** Messages written with the call's backpressure; a cancelled call (client gone, deadline passed) accepts no more. */
function writableSink(call: StreamCall): StreamSink {
  let gone = false;
  const waiters = new Set<() => void>();
  const wake = () => { for (const w of waiters) w(); waiters.clear(); };
  call.on('cancelled', () => { gone = true; wake(); });
  call.on('drain', wake);
  return {
    get clientGone() { return gone; },
    send: async (message) => {
      if (gone) return;
      if (call.write(message)) return;
      await new Promise<void>((resolve) => waiters.add(resolve));
    },
  };
}
