import express from 'express';
import type { AddressInfo } from 'node:net';
import { Metrics, routeLabel } from './metrics';

describe('routeLabel', () => {
  it.each([
    ['/v1/chat/completions', '/v1/chat/completions'],
    ['/v1/billing/requests/br-2f1c0e6a-93b1-4c55-9f0e-0c1d2e3f4a5b?x=1', '/v1/billing/requests/:id'],
    ['/v1/keys/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', '/v1/keys/:id'],
    ['/v1/batches/batch_abc123/cancel', '/v1/batches/:id/cancel'],
    ['/v1/models/simulated/echo-chat', '/v1/models/simulated/echo-chat'],
    ['', '/'],
  ])('%s is labelled %s', (url, label) => {
    expect(routeLabel(url)).toBe(label);
  });
});

describe('Metrics', () => {
  it('counts HTTP requests by method, route (ids folded) and status', async () => {
    const metrics = new Metrics('metrics-test', false);
    const app = express();
    app.use(metrics.httpMiddleware());
    app.get('/v1/files/:id', (_req, res) => { res.status(404).end(); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await fetch(`${base}/v1/files/file-1`);
    await fetch(`${base}/v1/files/file-2`);
    server.close();
    expect(await metrics.registry.getSingleMetricAsString('gw_http_requests_total'))
      .toContain('gw_http_requests_total{method="GET",route="/v1/files/:id",status="404",service="metrics-test"} 2');
  });

  it('reports job queues at scrape time, leaving out a queue whose store cannot answer', async () => {
    const metrics = new Metrics('metrics-test', false);
    metrics.watchJobQueue('ok.kind', async () => ({ queued: 3, inProgress: 1, oldestQueuedAgeMs: 2500 }));
    metrics.watchJobQueue('down.kind', async () => { throw new Error('store down'); });
    const text = await metrics.registry.metrics();
    expect(text).toContain('gw_jobs_queue_depth{kind="ok.kind",state="queued",service="metrics-test"} 3');
    expect(text).toContain('gw_jobs_oldest_queued_age_seconds{kind="ok.kind",service="metrics-test"} 2.5');
    expect(text).not.toContain('down.kind');
  });
});
