import * as grpc from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { callUnary, startGrpcServer, unaryHandler, type GrpcServerHandle } from './grpc';
import { createLogger } from './logger';
import { currentTraceId, startTracing, type Tracing } from './tracing';

/** A JSON-encoded unary method, so the test needs no .proto. */
const json = { serialize: (v: unknown) => Buffer.from(JSON.stringify(v)), deserialize: (b: Buffer) => JSON.parse(b.toString('utf8')) as unknown };
const definition = {
  Echo: {
    path: '/test.Tracing/Echo', requestStream: false, responseStream: false,
    requestSerialize: json.serialize, requestDeserialize: json.deserialize, responseSerialize: json.serialize, responseDeserialize: json.deserialize,
  },
} as const;

describe('tracing over gRPC (callUnary -> unaryHandler)', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let server: GrpcServerHandle;
  let client: grpc.Client & { Echo: grpc.MethodDefinition<unknown, unknown> };

  beforeAll(async () => {
    tracing = startTracing('grpc-test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_SCHEDULE_DELAY: '10' }, exporter)!;
    server = await startGrpcServer('127.0.0.1:0', (s) => s.addService(definition as never, {
      Echo: unaryHandler(createLogger('grpc-test', 'silent'), async () => ({ traceId: currentTraceId() })),
    }));
    const Client = grpc.makeGenericClientConstructor(definition as never, 'Tracing');
    client = new Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure()) as never;
  });

  afterAll(async () => {
    client.close();
    await server.shutdown(0);
    await tracing.shutdown();
  });

  test("the server's span is a child of the caller's span, in the caller's trace", async () => {
    const { answer, caller } = await trace.getTracer('caller').startActiveSpan('caller', async (span) => {
      try {
        const res = await callUnary<object, { traceId: string }>(client, (client as unknown as { Echo: never }).Echo, {});
        return { answer: res, caller: span.spanContext() };
      } finally {
        span.end();
      }
    });
    expect(answer.traceId).toBe(caller.traceId);
    await tracing.forceFlush();
    const rpc = exporter.getFinishedSpans().find((s) => s.name === '/test.Tracing/Echo')!;
    expect(rpc).toBeDefined();
    expect(rpc.spanContext().traceId).toBe(caller.traceId);
    expect(rpc.parentSpanContext?.spanId).toBe(caller.spanId);
  });
});
