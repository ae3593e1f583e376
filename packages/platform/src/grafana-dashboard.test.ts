import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Histogram } from 'prom-client';
import { Health } from './health';
import { Metrics } from './metrics';

const DASHBOARD = join(__dirname, '../../../deploy/grafana/gateway-dashboard.json');

interface Panel {
  title: string;
  targets?: { expr: string }[];
}

/** Every family a service can register, with the label names each sample of it may carry. */
function registeredFamilies(): Map<string, Set<string>> {
  const metrics = new Metrics('dashboard-test');
  new Health({ metrics });
  void [metrics.calls, metrics.routing, metrics.cost, metrics.webhooks, metrics.edge];
  metrics.watchJobQueue('kind', async () => ({ queued: 0, inProgress: 0, oldestQueuedAgeMs: 0 }));
  metrics.watchConsumerLag('group', async () => ({}));
  metrics.watchCooldowns(() => new Map());
  const families = new Map<string, Set<string>>();
  for (const m of metrics.registry.getMetricsAsArray()) {
    const { name, labelNames } = m as unknown as { name: string; labelNames: string[] };
    const labels = new Set([...labelNames, 'service', 'instance', 'job']);
    if (m instanceof Histogram) {
      families.set(`${name}_bucket`, new Set([...labels, 'le']));
      families.set(`${name}_sum`, labels);
      families.set(`${name}_count`, labels);
    } else {
      families.set(name, labels);
    }
  }
  return families;
}

/** `name{selectors}` and bare metric names in a PromQL expression (identifiers of our families and the runtime's). */
function metricRefs(expr: string): { name: string; labels: string[] }[] {
  const refs: { name: string; labels: string[] }[] = [];
  for (const m of expr.matchAll(/\b((?:gw|process|nodejs)_[a-z0-9_]+)(\{([^}]*)\})?/g)) {
    const labels = [...(m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!);
    refs.push({ name: m[1]!, labels });
  }
  return refs;
}

describe('the Grafana dashboard (deploy/grafana/gateway-dashboard.json)', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { title: string; panels: Panel[] };
  const families = registeredFamilies();
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  it('has panels with queries', () => {
    expect(dashboard.title).toBeTruthy();
    expect(exprs.length).toBeGreaterThan(10);
  });

  it('every query names only metrics the code registers, with labels those metrics carry', () => {
    const problems: string[] = [];
    for (const { panel, expr } of exprs) {
      const refs = metricRefs(expr);
      if (refs.length === 0) problems.push(`${panel}: names no metric: ${expr}`);
      for (const ref of refs) {
        const labels = families.get(ref.name);
        if (!labels) problems.push(`${panel}: ${ref.name} is not registered`);
        else for (const l of ref.labels) if (!labels.has(l)) problems.push(`${panel}: ${ref.name} has no label ${l}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('shows the figures an operator watches', () => {
    const used = new Set(exprs.flatMap(({ expr }) => metricRefs(expr).map((r) => r.name.replace(/_(bucket|sum|count)$/, ''))));
    for (const name of [
      'gw_http_requests_total', 'gw_provider_calls_total', 'gw_upstream_latency_seconds', 'gw_time_to_first_token_seconds',
      'gw_tokens_total', 'gw_cost_micros_total', 'gw_upstream_retries_total', 'gw_upstream_fallbacks_total', 'gw_deployment_cooldowns_total',
      'gw_jobs_queue_depth', 'gw_jobs_oldest_queued_age_seconds', 'gw_webhook_deliveries_total', 'gw_edge_rate_limited_total', 'gw_bus_consumer_lag',
    ]) expect(used).toContain(name);
  });
});
