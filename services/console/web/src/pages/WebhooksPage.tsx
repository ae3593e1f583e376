import { useState, type FormEvent } from 'react';
import { api, type CurrentKey, type Delivery, type WebhookSettings } from '../api';
import { ErrorNotice, SecretOnce, Section, useAction, useLoad } from '../components';
import { dateTime } from '../format';

/** The account's default webhook: URL, signing secret (shown once when made), a test event, the delivery log. */
export function WebhooksPage({ me }: { me: CurrentKey }) {
  const settings = useLoad(() => api<{ data: WebhookSettings }>('/v1/webhooks/settings').then((r) => r.data));
  const deliveries = useLoad(() => api<{ data: Delivery[] }>('/v1/webhooks/deliveries?limit=50').then((r) => r.data));
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <Section title="Default webhook">
        {settings.error ? <ErrorNotice error={settings.error} feature="webhooks (GET /v1/webhooks/settings)" /> : null}
        {settings.data ? (
          <SettingsForm
            current={settings.data} canChange={me.is_management_key}
            onSaved={(s) => { if (s.secret) setSecret(s.secret); settings.reload(); }}
            onTestSent={deliveries.reload}
          />
        ) : settings.loading ? <p role="status">Loading settings…</p> : null}
      </Section>
      {secret ? <SecretOnce label="Signing secret" secret={secret} onDismiss={() => setSecret(null)} /> : null}
      <Section title="Delivery log">
        <button type="button" onClick={deliveries.reload}>Refresh deliveries</button>
        {deliveries.error ? <ErrorNotice error={deliveries.error} feature="the delivery log (GET /v1/webhooks/deliveries)" /> : null}
        {deliveries.data ? <DeliveryTable rows={deliveries.data} /> : null}
      </Section>
    </>
  );
}

function SettingsForm({ current, canChange, onSaved, onTestSent }: {
  current: WebhookSettings; canChange: boolean; onSaved: (s: WebhookSettings) => void; onTestSent: () => void;
}) {
  const [url, setUrl] = useState(current.url ?? '');
  const [sent, setSent] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const save = (rotate: boolean) => run(async () => {
    const r = await api<{ data: WebhookSettings }>('/v1/webhooks/settings', { method: 'PUT', body: { url: url.trim() === '' ? null : url.trim(), rotate_secret: rotate } });
    onSaved(r.data);
  });
  const submit = (e: FormEvent) => { e.preventDefault(); void save(false); };
  const test = () => run(async () => {
    const r = await api<{ data: { event_id: string; url: string } }>('/v1/webhooks/test', { method: 'POST' });
    setSent(`Test event ${r.data.event_id} queued for ${r.data.url}`);
    onTestSent();
  });
  return (
    <>
      <dl>
        <dt>Signing secret</dt><dd>{current.has_secret ? 'set (never shown again)' : 'none yet'}</dd>
        <dt>Last changed</dt><dd>{dateTime(current.updated_at)}</dd>
      </dl>
      <form onSubmit={submit} aria-label="Webhook settings">
        <label>Default webhook URL<input type="url" value={url} onChange={(e) => setUrl(e.target.value)} disabled={!canChange} placeholder="https://example.com/hooks" size={48} /></label>
        <button type="submit" disabled={busy || !canChange}>Save URL</button>
        <button type="button" disabled={busy || !canChange} onClick={() => void save(true)}>{current.has_secret ? 'Rotate signing secret' : 'Create signing secret'}</button>
        <button type="button" disabled={busy || !canChange || !current.url} onClick={() => void test()}>Send test event</button>
      </form>
      {!canChange ? <p className="notice">Changing these settings needs a management key.</p> : null}
      {sent ? <p role="status">{sent}</p> : null}
      {error ? <ErrorNotice error={error} /> : null}
    </>
  );
}

function DeliveryTable({ rows }: { rows: Delivery[] }) {
  if (rows.length === 0) return <p>No deliveries yet.</p>;
  return (
    <table aria-label="Deliveries">
      <thead>
        <tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">URL</th><th scope="col">Status</th><th scope="col">Attempt</th><th scope="col">Response</th><th scope="col">Latency</th><th scope="col">Error</th></tr>
      </thead>
      <tbody>
        {rows.map((d) => (
          <tr key={d.id}>
            <td>{dateTime(d.created_at)}</td><td>{d.event}<br /><code>{d.event_id}</code></td><td>{d.url}</td><td>{d.status}</td><td>{d.attempt}</td>
            <td>{d.response_code ?? '—'}</td><td>{d.latency_ms === null ? '—' : `${d.latency_ms} ms`}</td><td>{d.error ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
