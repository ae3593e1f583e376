import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/** One span as the collector received it (OTLP/JSON, ids in hex). */
export interface CollectedSpan {
  service: string;
  scope: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

export interface OtlpCollector {
  /** What `OTEL_EXPORTER_OTLP_ENDPOINT` is set to (the exporter appends `/v1/traces`). */
  url: string;
  spans: CollectedSpan[];
  close(): Promise<void>;
}

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: { scope?: { name?: string }; spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number }[] }[];
  }[];
}

/** A minimal OTLP/HTTP trace receiver (JSON encoding, as `@opentelemetry/exporter-trace-otlp-http` sends it). */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      let body: OtlpJson;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJson;
      } catch {
        res.writeHead(400).end();
        return;
      }
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({ service, scope: ss.scope?.name ?? '', name: s.name, kind: s.kind, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '' });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/**
 * OTLP/JSON over `fetch`, encoded by the SDK's own serializer: what the OTLP HTTP exporter sends, for a stack
 * running inside the test runner's VM, where that exporter's lazy `import('http')` is refused.
 */
export function otlpJsonExporter(endpoint: string): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      const body = JsonTraceSerializer.serializeRequest(spans);
      fetch(`${endpoint}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body ? Buffer.from(body) : '' })
        .then((res) => done({ code: res.ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED }), (error: Error) => done({ code: ExportResultCode.FAILED, error }));
    },
    shutdown: async () => undefined,
  };
}
