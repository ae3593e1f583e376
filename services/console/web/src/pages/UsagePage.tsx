import { useState, type FormEvent } from 'react';
import { api, query, type Balance, type CurrentKey, type KeyObject, type UsageRow } from '../api';
import { ErrorNotice, Section, useLoad } from '../components';
import { dateTime, usd } from '../format';
import { tokensOf, UsageChart, type ChartWindow, type Metric } from '../UsageChart';

const RANGES = { '1h': 3600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
const STEP_MS: Record<Interval, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** Per-minute rows cover at most a day (the API refuses longer minute queries). */
const MINUTE_MAX_RANGE_MS = 86_400_000;
type Range = keyof typeof RANGES;
type Interval = 'minute' | 'hour' | 'day';
type GroupBy = 'model' | 'key';

interface UsageQuery { range: Range; interval: Interval; groupBy: GroupBy }

/** The account's balance, and its usage over time by model or by key (`GET /v1/usage`). */
export function UsagePage({ me }: { me: CurrentKey }) {
  // Keys are charted by name; only a management key may list the others.
  const keyNames = useLoad(async () => {
    const keys: KeyObject[] = me.is_management_key ? (await api<{ data: KeyObject[] }>('/v1/keys?include_disabled=true')).data : [me];
    return new Map(keys.map((k) => [k.hash, k.name]));
  });
  const balance = useLoad(() => api<{ data: Balance }>('/v1/billing/balance').then((r) => r.data));
  const [q, setQ] = useState<UsageQuery>({ range: '24h', interval: 'hour', groupBy: 'model' });
  const [metric, setMetric] = useState<Metric>('charged_cost');
  return (
    <>
      <Section title="Balance">
        {balance.error ? <ErrorNotice error={balance.error} /> : null}
        {balance.data ? (
          <div className="figures" aria-label="Balance figures">
            <p>Spendable<br /><span aria-label="Spendable">{usd(balance.data.spendable)}</span></p>
            <p>Wallet<br /><span aria-label="Wallet">{usd(balance.data.wallet)}</span></p>
            <p>Credit<br /><span aria-label="Credit">{usd(balance.data.credit)}</span></p>
          </div>
        ) : balance.loading ? <p role="status">Loading balance…</p> : null}
      </Section>
      <Section title="Usage over time">
        <UsageForm value={q} onChange={setQ} metric={metric} onMetric={setMetric} />
        <UsageResult q={q} metric={metric} keyNames={keyNames.data ?? new Map()} />
      </Section>
    </>
  );
}

function UsageForm({ value, onChange, metric, onMetric }: { value: UsageQuery; onChange: (q: UsageQuery) => void; metric: Metric; onMetric: (m: Metric) => void }) {
  const [draft, setDraft] = useState(value);
  const submit = (e: FormEvent) => { e.preventDefault(); onChange(draft); };
  return (
    <form onSubmit={submit} aria-label="Usage query">
      <label>Period
        <select value={draft.range} onChange={(e) => {
          const range = e.target.value as Range;
          const interval = draft.interval === 'minute' && RANGES[range] > MINUTE_MAX_RANGE_MS ? 'hour' : draft.interval;
          setDraft({ ...draft, range, interval });
        }}>
          <option value="1h">last hour</option><option value="24h">last 24 hours</option><option value="7d">last 7 days</option><option value="30d">last 30 days</option>
        </select>
      </label>
      <label>Interval
        <select value={draft.interval} onChange={(e) => setDraft({ ...draft, interval: e.target.value as Interval })}>
          <option value="minute" disabled={RANGES[draft.range] > MINUTE_MAX_RANGE_MS}>minute</option><option value="hour">hour</option><option value="day">day</option>
        </select>
      </label>
      <label>Group by
        <select value={draft.groupBy} onChange={(e) => setDraft({ ...draft, groupBy: e.target.value as GroupBy })}>
          <option value="model">model</option><option value="key">key</option>
        </select>
      </label>
      <button type="submit">Show usage</button>
      <label>Chart
        <select value={metric} onChange={(e) => onMetric(e.target.value as Metric)}>
          <option value="charged_cost">charged cost</option><option value="requests">requests</option><option value="tokens">tokens</option>
        </select>
      </label>
    </form>
  );
}

function UsageResult({ q, metric, keyNames }: { q: UsageQuery; metric: Metric; keyNames: Map<string, string> }) {
  const usage = useLoad(async () => {
    const to = new Date();
    const from = new Date(to.getTime() - RANGES[q.range]);
    const params = query({ from: from.toISOString(), to: to.toISOString(), interval: q.interval, group_by: q.groupBy });
    const rows = (await api<{ data: UsageRow[] }>(`/v1/usage?${params}`)).data;
    // The API answers whole intervals (UTC): the chart spans the same.
    const stepMs = STEP_MS[q.interval];
    const span: ChartWindow = { fromMs: Math.floor(from.getTime() / stepMs) * stepMs, toMs: Math.ceil(to.getTime() / stepMs) * stepMs, stepMs };
    return { rows, span };
  }, [q.range, q.interval, q.groupBy]);
  if (usage.error) return <ErrorNotice error={usage.error} feature="usage statistics (GET /v1/usage)" />;
  if (!usage.data) return <p role="status">Loading usage…</p>;
  const { rows, span } = usage.data;
  if (rows.length === 0) return <p role="status">No usage in this period.</p>;
  const keyName = (hash: string) => keyNames.get(hash) ?? `${hash.slice(0, 12)}…`;
  const groupOf = (r: UsageRow) => (q.groupBy === 'model' ? r.model : r.key_hash === undefined ? undefined : keyName(r.key_hash)) ?? 'all';
  return (
    <>
      <UsageChart rows={rows} groupOf={groupOf} metric={metric} span={span} />
      <table aria-label="Usage">
        <thead>
          <tr><th scope="col">From</th><th scope="col">{q.groupBy === 'model' ? 'Model' : 'Key'}</th><th scope="col">Requests</th><th scope="col">Errors</th><th scope="col">Prompt / completion tokens</th><th scope="col">All tokens</th><th scope="col">List cost</th><th scope="col">Charged</th><th scope="col">Latency p50 / p95 ms</th><th scope="col">First token p50 / p95 ms</th></tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${String(r.start)}-${groupOf(r)}`}>
              <td>{dateTime(r.start)}</td><td>{groupOf(r)}</td><td>{r.requests}</td><td>{r.errors}</td><td>{r.prompt_tokens} / {r.completion_tokens}</td><td>{tokensOf(r)}</td>
              <td>{usd(r.list_cost)}</td><td>{usd(r.charged_cost)}</td><td>{r.latency_ms_p50 ?? '—'} / {r.latency_ms_p95 ?? '—'}</td><td>{r.ttft_ms_p50 ?? '—'} / {r.ttft_ms_p95 ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
