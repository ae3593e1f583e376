import { context, isSpanContextValid, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import * as http from 'node:http';
import * as https from 'node:https';
import { z } from 'zod';
import { loadConfig } from './config';
import { newTraceId } from './ids';

/**
 * OpenTelemetry tracing, configured by the standard variables: on only when an OTLP endpoint is set
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`),
 * named by `OTEL_SERVICE_NAME`, batched every `OTEL_BSP_SCHEDULE_DELAY` ms (default 5000). Off, nothing is installed and every helper here is a plain call: the hot
 * path pays one boolean test.
 */
const tracingEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).optional(),
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(0).default(5000),
});

export interface Tracing {
  /** Exports what is buffered (tests, and before a process exits). */
  forceFlush(): Promise<void>;
  /** Flushes and uninstalls, so the process is back to the no-op tracer. */
  shutdown(): Promise<void>;
}

type Installed = Tracing & { provider: TracerProvider };

/**
 * Kept on the global object, as the OpenTelemetry API keeps its own: a module loaded twice (test runners'
 * registries) still sees the one installation.
 */
const INSTALLED = Symbol.for('gw.tracing.installed');
const holder = globalThis as { [INSTALLED]?: Installed | null };

/** Whether spans are recorded in this process. */
export function tracingEnabled(): boolean {
  return holder[INSTALLED] != null;
}

/**
 * Installs the SDK for this process when an endpoint is configured; null otherwise. One per process: in the
 * single-process mode every service shares it (each names its spans' tracer after itself). `exporter` replaces
 * the OTLP HTTP one where its lazy `import('http')` cannot run (a test runner's VM without ES modules).
 */
export function startTracing(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env, exporter?: SpanExporter): Tracing | null {
  const cfg = loadConfig(tracingEnv, env);
  if (cfg.OTEL_SDK_DISABLED === 'true' || !(cfg.OTEL_EXPORTER_OTLP_ENDPOINT || cfg.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)) return null;
  const current = holder[INSTALLED];
  if (current) return current;
  // As the specification resolves them: the signal's own URL as given, else the base URL plus `v1/traces`.
  const url = cfg.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${cfg.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`;
  // The SDK is loaded only when tracing is on: it is a tenth of a second of every start otherwise.
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { BatchSpanProcessor, TracerProvider } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': cfg.OTEL_SERVICE_NAME ?? defaultServiceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporter ?? new OTLPTraceExporter({ url, httpAgentOptions: keepAliveAgent }), scheduledDelayMillis: cfg.OTEL_BSP_SCHEDULE_DELAY })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const handle: Installed = {
    provider,
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      if (holder[INSTALLED] !== handle) return;
      holder[INSTALLED] = null;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
  holder[INSTALLED] = handle;
  return handle;
}

/** The exporter's connection pool, made here: its default loads `http` by a dynamic import, which some runtimes (test VMs) refuse. */
const keepAliveAgent = (protocol: string) => (protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ keepAlive: true }));

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** The trace id of a valid W3C `traceparent` (version 00, ids not all zero); null otherwise. */
export function traceIdOfTraceparent(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const m = TRACEPARENT.exec(header.trim());
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return null;
  return m[1];
}

/** The trace id of the current span (a server span of a request or RPC); null when tracing is off or none is current. */
export function currentTraceId(): string | null {
  if (!tracingEnabled()) return null;
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && isSpanContextValid(sc) ? sc.traceId : null;
}

export interface ServerSpan {
  /** The trace id of the request: the span's, or the given `traceparent`'s, or a new one. */
  traceId: string;
  /** Runs `fn` with the span current; a plain call when tracing is off. */
  run<T>(fn: () => T): T;
  /** Ends the span (once; later calls do nothing), named `name` when given (e.g. the route once it is known). */
  end(status?: number, name?: string): void;
}

const noSpan = (traceId: string): ServerSpan => ({ traceId, run: (fn) => fn(), end: () => undefined });

/**
 * A server span for an incoming HTTP request or RPC, child of the `traceparent` in `carrier` when there is a
 * valid one. With tracing off it still honours that trace id, so logs and billing records join the caller's trace.
 */
export function startServerSpan(tracerName: string, name: string, carrier: Record<string, unknown>, attributes: Attributes = {}, kind = SpanKind.SERVER): ServerSpan {
  if (!tracingEnabled()) return noSpan(traceIdOfTraceparent(carrier.traceparent as string | undefined) ?? newTraceId());
  const parent = propagation.extract(context.active(), carrier);
  const span = trace.getTracer(tracerName).startSpan(name, { kind, attributes }, parent);
  const ctx = trace.setSpan(parent, span);
  let ended = false;
  return {
    traceId: span.spanContext().traceId,
    run: (fn) => context.with(ctx, fn),
    end: (status, finalName) => {
      if (ended) return;
      ended = true;
      if (finalName) span.updateName(finalName);
      endSpan(span, status);
    },
  };
}

function endSpan(span: Span, status?: number): void {
  if (status !== undefined) {
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** The current span's W3C `traceparent`, to continue its trace later (a queued job); undefined when tracing is off. */
export function currentTraceparent(): string | undefined {
  if (!tracingEnabled()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** Runs `fn` in a consumer span continuing `traceparent` (work taken from a queue); a plain call when tracing is off. */
export async function inConsumerSpan<T>(tracerName: string, name: string, traceparent: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return fn();
  const span = startServerSpan(tracerName, name, traceparent ? { traceparent } : {}, {}, SpanKind.CONSUMER);
  try {
    return await span.run(fn);
  } finally {
    span.end();
  }
}

/** Writes the current span's `traceparent` into `carrier` (outgoing headers or gRPC metadata); nothing when off. */
export function injectTraceContext(carrier: Record<string, unknown>, ctx: Context = context.active()): void {
  if (tracingEnabled()) propagation.inject(ctx, carrier);
}

/**
 * A client span around an outgoing call (a provider, another service): its `traceparent` goes into
 * `headers` before `call` runs. Ends when `call` settles, with the status `statusOf` reads from the answer.
 */
export async function traceOutgoing<T>(
  tracerName: string, name: string, attributes: () => Attributes, headers: Record<string, string>,
  call: () => Promise<T>, statusOf?: (result: T) => number,
): Promise<T> {
  if (!tracingEnabled()) return call();
  const span = trace.getTracer(tracerName).startSpan(name, { kind: SpanKind.CLIENT, attributes: attributes() });
  const ctx = trace.setSpan(context.active(), span);
  if (isSpanContextValid(span.spanContext())) propagation.inject(ctx, headers);
  try {
    const result = await context.with(ctx, call);
    endSpan(span, statusOf?.(result));
    return result;
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    span.end();
    throw err;
  }
}
