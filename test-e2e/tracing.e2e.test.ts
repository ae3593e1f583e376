import { trace } from '@opentelemetry/api';
import { createInferenceClient } from '@gw/inference-client';
import { startTracing, type Tracing } from '@gw/platform';
import { api, waitForBilledRequest } from './harness/api';
import { useCallbackReceiver } from './harness/callback-receiver';
import { E2E_MODEL } from './harness/catalog';
import { otlpJsonExporter, startOtlpCollector, type CollectedSpan, type OtlpCollector } from './harness/otlp-collector';
import { waitFor } from './harness/ports';
import { startStack, type StackMode, type TestStack } from './harness/stack';

jest.setTimeout(60_000);

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/**
 * The spans of one trace, once those of every scope named (by default the edge's, inference's, the provider
 * call's and the simulator's) have arrived, and each `[scope, kind]` in `kinds` (spans of one scope are
 * exported as each ends, so a scope seen is not yet all of its spans).
 */
async function traceOf(collector: OtlpCollector, traceId: string, scopes = ['edge', 'inference', 'gateway.providers', 'provider-simulator'], kinds: [string, number][] = []): Promise<CollectedSpan[]> {
  const spans = () => collector.spans.filter((s) => s.traceId === traceId);
  const complete = () => {
    const seen = new Set(spans().map((s) => s.scope));
    const seenKinds = new Set(spans().map((s) => `${s.scope}/${s.kind}`));
    return scopes.every((scope) => seen.has(scope)) && kinds.every(([scope, kind]) => seenKinds.has(`${scope}/${kind}`));
  };
  await waitFor(`the spans of trace ${traceId}`, async () => complete(), 30_000)
    .catch((err: Error) => { throw new Error(`${err.message}; received: ${JSON.stringify(collector.spans)}`); });
  return spans();
}

const one = (spans: CollectedSpan[], scope: string, kind: number) => {
  const found = spans.filter((s) => s.scope === scope && s.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
};

/** Whether `span` descends from `ancestor` within `spans`. */
function descendsFrom(spans: CollectedSpan[], span: CollectedSpan, ancestor: CollectedSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let s = byId.get(span.parentSpanId); s; s = byId.get(s.parentSpanId)) if (s.spanId === ancestor.spanId) return true;
  return false;
}

describe.each<StackMode>(['embedded', 'processes'])('OpenTelemetry tracing across edge, inference and the provider (%s)', (mode) => {
  let collector: OtlpCollector;
  let stack: TestStack;
  let tracing: Tracing | null = null;
  const callbacks = useCallbackReceiver(`tracing-${mode}`);

  beforeAll(async () => {
    collector = await startOtlpCollector();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100', ...callbacks.env };
    // The single-process mode has one tracer provider for the process, as `scripts/start.sh` installs it; with the
    // services in their own processes, the test's is a gRPC caller's.
    tracing = startTracing(mode === 'embedded' ? 'gateway' : 'e2e-caller', { ...process.env, ...env }, otlpJsonExporter(collector.url));
    stack = await startStack(mode, { env });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await tracing?.shutdown();
    await collector?.close();
  }, 30_000);

  const chat = (headers: Record<string, string> = {}) => api(stack.baseURL, 'POST', '/chat/completions', {
    key: stack.key, headers, body: { model: E2E_MODEL, messages: [{ role: 'user', content: 'trace me' }] },
  });

  test("a client's traceparent is honoured: one trace from the edge through inference and the provider call to the simulator, with the billing record carrying its id", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpanId = '00f067aa0ba902b7';
    const res = await chat({ traceparent: `00-${traceId}-${clientSpanId}-01` });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-trace-id')).toBe(traceId);

    const spans = await traceOf(collector, traceId);
    const edge = one(spans, 'edge', SERVER);
    const inference = one(spans, 'inference', SERVER);
    const provider = one(spans, 'gateway.providers', CLIENT);
    const simulator = one(spans, 'provider-simulator', SERVER);
    expect(edge.parentSpanId).toBe(clientSpanId);
    expect(inference.parentSpanId).toBe(edge.spanId);
    expect(inference.name).toBe('POST /v1/chat/completions');
    expect(descendsFrom(spans, provider, inference)).toBe(true);
    expect(simulator.parentSpanId).toBe(provider.spanId);
    if (mode === 'processes') {
      expect([edge.service, inference.service, simulator.service]).toEqual(['edge', 'inference', 'provider-simulator']);
    }

    const record = await waitForBilledRequest(stack.baseURL, stack.key, res.headers.get('x-request-id')!);
    expect(record.trace_id).toBe(traceId);
  });

  test('without a traceparent the edge starts the trace, and its id is the one the client is told', async () => {
    const res = await chat();
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-trace-id')!;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = await traceOf(collector, traceId);
    expect(one(spans, 'edge', SERVER).parentSpanId).toBe('');
    expect(one(spans, 'inference', SERVER).parentSpanId).toBe(one(spans, 'edge', SERVER).spanId);
  });

  test.each([
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['a malformed header', 'not-a-traceparent'],
  ])('%s is not honoured: the edge starts a new trace', async (_name, traceparent) => {
    const res = await chat({ traceparent });
    expect(res.status).toBe(200);
    const traceId = res.headers.get('x-trace-id')!;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('00000000000000000000000000000000');
    expect(one(await traceOf(collector, traceId), 'edge', SERVER).parentSpanId).toBe('');
  });

  test('a gRPC call to the inference API continues the caller\'s trace: its span is the parent of the RPC, the provider call follows, the billing record carries it', async () => {
    const client = createInferenceClient(stack.internal.inferenceGrpc, { kind: 'api-key', apiKey: stack.key }, { deadlineMs: 30_000 });
    try {
      // The caller traces too: the client sends its span's traceparent.
      const res = await trace.getTracer('test-caller').startActiveSpan('caller', async (span) => {
        try {
          return { ...(await client.createChatCompletion({ model: E2E_MODEL, messages: [{ role: 'user', content: 'trace me over gRPC' }] })), parent: span.spanContext() };
        } finally {
          span.end();
        }
      });
      const spans = await traceOf(collector, res.parent.traceId, ['test-caller', 'gateway.grpc', 'gateway.providers', 'provider-simulator']);
      const rpc = spans.find((s) => s.scope === 'gateway.grpc' && s.name.endsWith('/CreateChatCompletion'))!;
      expect(rpc).toBeDefined();
      expect(rpc.parentSpanId).toBe(res.parent.spanId);
      expect(descendsFrom(spans, one(spans, 'gateway.providers', CLIENT), rpc)).toBe(true);
      expect(one(spans, 'provider-simulator', SERVER).parentSpanId).toBe(one(spans, 'gateway.providers', CLIENT).spanId);
      const record = await waitForBilledRequest(stack.baseURL, stack.key, res.requestId);
      expect(record.trace_id).toBe(res.parent.traceId);
    } finally {
      client.close();
    }
  });

  test('an async chat job continues the trace of the request that queued it, whichever worker runs it', async () => {
    const traceId = '5ce929d0e0e47364bf92f3577b34da6a';
    const submitted = await api(stack.baseURL, 'POST', '/async/chat/completions', {
      key: stack.key, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }, body: { model: E2E_MODEL, messages: [{ role: 'user', content: 'trace me later' }] },
    });
    expect(submitted.status).toBe(200);
    const spans = await traceOf(collector, traceId, undefined, [['inference', SERVER], ['inference', CONSUMER]]);
    const submit = spans.find((s) => s.scope === 'inference' && s.kind === SERVER)!;
    const run = one(spans, 'inference', CONSUMER);
    expect(run.parentSpanId).toBe(submit.spanId);
    expect(descendsFrom(spans, one(spans, 'gateway.providers', CLIENT), run)).toBe(true);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, submitted.body.request_id);
    expect(record.trace_id).toBe(traceId);
  });

  test('a batch continues the trace of the request that created it: each line (the inference RPC under it, the billing record carrying its id) and its callback delivery', async () => {
    const traceId = '7a1c4e2f9b3d4a6c8e0f1a2b3c4d5e6f';
    const form = new FormData();
    form.append('purpose', 'batch');
    const line = { custom_id: 'traced', method: 'POST', url: '/v1/chat/completions', body: { model: E2E_MODEL, messages: [{ role: 'user', content: 'trace my line' }] } };
    form.append('file', new Blob([`${JSON.stringify(line)}\n`]), 'traced.jsonl');
    const uploaded = await fetch(`${stack.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${stack.key}` }, body: form });
    expect(uploaded.status).toBe(200);
    const fileId = ((await uploaded.json()) as { id: string }).id;
    const created = await api(stack.baseURL, 'POST', '/batches', {
      key: stack.key, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', execution: 'platform', callback_url: `${callbacks.receiver.origin}/traced-hook` },
    });
    expect(created.status).toBe(200);
    let batch: { status?: string; output_file_id?: string } = {};
    await waitFor('the batch to complete', async () => {
      batch = (await api(stack.baseURL, 'GET', `/batches/${created.body.id}`, { key: stack.key })).body;
      return batch.status === 'completed';
    }, 60_000);
    const spans = await traceOf(collector, traceId, ['edge', 'batch', 'gateway.grpc', 'gateway.providers', 'provider-simulator'], [['batch', CONSUMER], ['webhooks', CONSUMER], ['webhooks', CLIENT]]);
    const create = spans.find((s) => s.scope === 'batch' && s.kind === SERVER && s.name === 'POST /v1/batches')!;
    const lineSpan = one(spans, 'batch', CONSUMER);
    expect(lineSpan.parentSpanId).toBe(create.spanId);
    const rpc = spans.find((s) => s.scope === 'gateway.grpc' && s.name.endsWith('/CreateChatCompletion'))!;
    expect(rpc.parentSpanId).toBe(lineSpan.spanId);
    // The callback's delivery joins the trace too; its traceparent is not sent to the receiver (a third party).
    const delivery = one(spans, 'webhooks', CONSUMER);
    expect(delivery.parentSpanId).toBe(create.spanId);
    expect(one(spans, 'webhooks', CLIENT).parentSpanId).toBe(delivery.spanId);
    const hook = callbacks.receiver.received.find((r) => r.path === '/traced-hook');
    expect(hook).toBeDefined();
    expect(hook!.headers.traceparent).toBeUndefined();
    expect(descendsFrom(spans, one(spans, 'gateway.providers', CLIENT), lineSpan)).toBe(true);
    const output = await (await fetch(`${stack.baseURL}/files/${batch.output_file_id}/content`, { headers: { authorization: `Bearer ${stack.key}` } })).text();
    const requestId = (JSON.parse(output.trim()) as { response: { request_id: string } }).response.request_id;
    expect((await waitForBilledRequest(stack.baseURL, stack.key, requestId)).trace_id).toBe(traceId);
  });
});
