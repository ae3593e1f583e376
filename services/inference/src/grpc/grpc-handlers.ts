import * as grpc from '@grpc/grpc-js';
import { authenticatedUnaryHandler, currentTraceId, newTraceId, startServerSpan, toGrpcError, traceIdOfTraceparent, tracingEnabled, type GrpcCallAuthenticator, type Logger } from '@gw/platform';
import type { InferenceHandlers, StreamChatCompletionResponse } from '@gw/proto';
import type { GrpcChat, GrpcChatRequest, StreamSink } from './grpc-chat';

type StreamCall = grpc.ServerWritableStream<GrpcChatRequest, StreamChatCompletionResponse>;

/**
 * A caller's trace id is kept when it has the platform's shape (it only labels logs), else its W3C traceparent's,
 * else the call's span's (tracing on); otherwise one is made.
 */
function traceIdOf(metadata: grpc.Metadata): string {
  const given = metadata.get('x-trace-id')[0];
  if (typeof given === 'string' && /^[0-9a-f]{32}$/.test(given)) return given;
  return traceIdOfTraceparent(metadata.get('traceparent')[0] as string | undefined) ?? currentTraceId() ?? newTraceId();
}

/** gateway.inference.v1.Inference: every call authenticated (API key or service identity); typed errors keep their class. */
export function inferenceGrpcHandlers(chat: GrpcChat, auth: GrpcCallAuthenticator, logger: Logger): InferenceHandlers {
  return {
    CreateChatCompletion: authenticatedUnaryHandler(logger, auth, async (req, caller, call) => {
      // A client that cancels (or whose deadline passes) aborts the upstream call; nothing is billed then. A call
      // under a caller-given request id runs to its end instead and is recorded: the caller's re-send (after its
      // crash, e.g. a batch line) replays the answer rather than calling the provider a second time.
      const abort = new AbortController();
      if (!req.request_id) call.on('cancelled', () => abort.abort());
      return chat.complete(req, caller, traceIdOf(call.metadata), abort.signal);
    }),
    StreamChatCompletion: (call: StreamCall) => {
      const span = tracingEnabled() ? startServerSpan('gateway.grpc', call.getPath(), call.metadata.getMap(), { 'rpc.system': 'grpc' }) : null;
      if (span) for (const done of ['finish', 'cancelled', 'error', 'close']) call.once(done, () => span.end());
      const sink = writableSink(call);
      const run = () => auth.authenticate(call)
        .then((caller) => chat.stream(call.request, caller, traceIdOf(call.metadata), sink))
        .then(
          () => { if (!sink.clientGone) call.end(); },
          (err: unknown) => {
            const status = toGrpcError(err);
            if (status.code === grpc.status.INTERNAL) logger.error({ err }, 'grpc stream failed');
            if (!sink.clientGone) call.emit('error', status);
          },
        );
      if (span) span.run(run);
      else run();
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
