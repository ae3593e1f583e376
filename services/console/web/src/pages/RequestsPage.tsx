import { useState, type FormEvent } from 'react';
import { api, ApiError, type ArchivedCall } from '../api';
import { ErrorNotice, Section, useLoad } from '../components';
import { dateTime, json, usd } from '../format';

interface RequestRecord {
  request_id: string; id: string | null; created_at: string; model: string; provider_name: string; api_type: string;
  status: string; streamed: boolean; usage: Record<string, unknown>; usage_estimated: boolean;
  list_cost: string; charged_cost: string; latency_ms: number; finish_reason: string | null; key_hash: string;
}

/** One call by its `request_id` (or the provider's id): its billing record and its archived request and response. */
export function RequestsPage() {
  const [draft, setDraft] = useState('');
  const [id, setId] = useState<string | null>(null);
  const submit = (e: FormEvent) => { e.preventDefault(); setId(draft.trim()); };
  return (
    <>
      <Section title="Find a call">
        <form onSubmit={submit} aria-label="Find a call">
          <label>Request id or provider id<input value={draft} onChange={(e) => setDraft(e.target.value)} required placeholder="br-…" spellCheck={false} size={48} /></label>
          <button type="submit">Look up</button>
        </form>
      </Section>
      {id ? <CallDetails key={id} id={id} /> : null}
    </>
  );
}

// Provider ids may contain slashes: one path segment, encoded.
const pathOf = (id: string) => `/v1/billing/requests/${encodeURIComponent(id)}`;

function CallDetails({ id }: { id: string }) {
  const record = useLoad(() => api<{ data: RequestRecord }>(pathOf(id)).then((r) => r.data));
  if (record.error) {
    const notFound = record.error instanceof ApiError && record.error.status === 404;
    return <Section title="Call">{notFound ? <p role="alert">No call with id {id} on this account.</p> : <ErrorNotice error={record.error} />}</Section>;
  }
  if (!record.data) return <p role="status">Looking up {id}…</p>;
  const r = record.data;
  return (
    <>
      <Section title="Billing record">
        <dl aria-label="Billing record">
          <dt>Request id</dt><dd>{r.request_id}</dd>
          <dt>Provider id</dt><dd>{r.id ?? '—'}</dd>
          <dt>When</dt><dd>{dateTime(r.created_at)}</dd>
          <dt>Model</dt><dd>{r.model} via {r.provider_name} ({r.api_type})</dd>
          <dt>Status</dt><dd>{r.status}{r.streamed ? ', streamed' : ''}{r.finish_reason ? `, ${r.finish_reason}` : ''}</dd>
          <dt>Usage</dt><dd>{Object.entries(r.usage ?? {}).filter(([, v]) => typeof v === 'number').map(([k, v]) => `${k} ${String(v)}`).join(', ')}{r.usage_estimated ? ' (estimated)' : ''}</dd>
          <dt>Cost</dt><dd>{usd(r.charged_cost)} charged (list {usd(r.list_cost)})</dd>
          <dt>Latency</dt><dd>{r.latency_ms} ms</dd>
          <dt>Key</dt><dd><code>{r.key_hash.slice(0, 16)}…</code></dd>
        </dl>
      </Section>
      <ArchivedCallView requestId={r.request_id} />
    </>
  );
}

function ArchivedCallView({ requestId }: { requestId: string }) {
  const archive = useLoad(() => api<{ data: ArchivedCall }>(`${pathOf(requestId)}/archive`).then((r) => r.data));
  let body;
  if (archive.error) {
    // Archiving may be off for this call, or the gateway may keep no archive at all: both answer 404.
    body = archive.error instanceof ApiError && archive.error.status === 404
      ? <p role="status" className="notice">The archived call is not available (archiving was off for it, or this gateway keeps no archive).</p>
      : <ErrorNotice error={archive.error} />;
  } else if (!archive.data) {
    body = <p role="status">Loading the archive…</p>;
  } else {
    const a = archive.data;
    body = (
      <>
        <p>Archived {dateTime(a.created_at)}{a.streamed ? ' · stream reassembled' : ''}{a.truncated ? ' · truncated' : ''}{a.trace_id ? ` · trace ${a.trace_id}` : ''}</p>
        {a.mode === 'metadata' ? <p role="status" className="notice">Only this call's metadata was kept (the archive was set to metadata only).</p> : (
          <>
            <h3>Request</h3>
            <pre aria-label="Archived request">{json(a.request)}</pre>
            <h3>Response</h3>
            <pre aria-label="Archived response">{json(a.response)}</pre>
          </>
        )}
      </>
    );
  }
  return <Section title="Archived call">{body}</Section>;
}
