import { useState, type FormEvent } from 'react';
import { api, type CurrentKey, type KeyObject } from '../api';
import { ErrorNotice, SecretOnce, Section, useAction, useLoad } from '../components';
import { dateTime, usd } from '../format';

/** The account's keys: create (secret shown once), disable / enable, limits, and each key's spend. */
export function KeysPage({ me }: { me: CurrentKey }) {
  if (!me.is_management_key) {
    return (
      <Section title="This key">
        <KeyFigures k={me} />
        <p className="notice" role="status">Managing keys needs a management key; this key can see only itself.</p>
      </Section>
    );
  }
  return <ManagedKeys me={me} />;
}

function ManagedKeys({ me }: { me: CurrentKey }) {
  const keys = useLoad(() => api<{ data: KeyObject[] }>('/v1/keys?include_disabled=true').then((r) => r.data));
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <CreateKey onCreated={(s) => { setSecret(s); keys.reload(); }} />
      {secret ? <SecretOnce label="New key secret" secret={secret} onDismiss={() => setSecret(null)} /> : null}
      <Section title="All keys">
        {keys.error ? <ErrorNotice error={keys.error} /> : null}
        {keys.data ? <KeyTable keys={keys.data} ownHash={me.hash} onChanged={keys.reload} /> : <p role="status">Loading keys…</p>}
      </Section>
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (secret: string) => void }) {
  const [name, setName] = useState('');
  const [limit, setLimit] = useState('');
  const [reset, setReset] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const body: Record<string, unknown> = { name };
      if (limit !== '') body.limit = Number(limit);
      if (reset !== '') body.limit_reset = reset;
      const r = await api<{ key: string }>('/v1/keys', { method: 'POST', body });
      setName(''); setLimit(''); setReset('');
      onCreated(r.key);
    });
  };
  return (
    <Section title="Create a key">
      <form onSubmit={submit} aria-label="Create a key">
        <label>Name<input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} /></label>
        <label>Spending limit (USD, empty for none)<input type="number" min="0" step="0.000001" value={limit} onChange={(e) => setLimit(e.target.value)} /></label>
        <label>Limit resets
          <select value={reset} onChange={(e) => setReset(e.target.value)}>
            <option value="">never</option><option value="daily">daily</option><option value="weekly">weekly</option><option value="monthly">monthly</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>Create key</button>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </Section>
  );
}

function KeyTable({ keys, ownHash, onChanged }: { keys: KeyObject[]; ownHash: string; onChanged: () => void }) {
  if (keys.length === 0) return <p>No keys.</p>;
  return (
    <table aria-label="Keys">
      <thead>
        <tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">State</th><th scope="col">Limit</th><th scope="col">Usage (total / day / week / month)</th><th scope="col">Created</th><th scope="col">Actions</th></tr>
      </thead>
      <tbody>{keys.map((k) => <KeyRow key={k.hash} k={k} own={k.hash === ownHash} onChanged={onChanged} />)}</tbody>
    </table>
  );
}

function KeyRow({ k, own, onChanged }: { k: KeyObject; own: boolean; onChanged: () => void }) {
  const [limit, setLimit] = useState(k.limit === null ? '' : String(k.limit));
  const { busy, error, run } = useAction();
  const patch = (body: Record<string, unknown>) => run(async () => {
    await api(`/v1/keys/${k.hash}`, { method: 'PATCH', body });
    onChanged();
  });
  const saveLimit = (e: FormEvent) => {
    e.preventDefault();
    void patch({ limit: limit === '' ? null : Number(limit) });
  };
  return (
    <tr aria-label={`Key ${k.name}`}>
      <th scope="row">{k.name}</th>
      <td><code>{k.label}</code></td>
      <td>{k.disabled ? 'disabled' : 'active'}</td>
      <td>
        {k.limit === null ? 'none' : `${usd(k.limit)} (${usd(k.limit_remaining)} left${k.limit_reset ? `, resets ${k.limit_reset}` : ''})`}
        <form onSubmit={saveLimit} aria-label={`Limit of ${k.name}`}>
          <label>New limit (USD, empty for none)<input type="number" min="0" step="0.000001" value={limit} onChange={(e) => setLimit(e.target.value)} /></label>
          <button type="submit" disabled={busy}>Save limit</button>
        </form>
      </td>
      <td>{usd(k.usage)} / {usd(k.usage_daily)} / {usd(k.usage_weekly)} / {usd(k.usage_monthly)}</td>
      <td>{dateTime(k.created_at)}</td>
      <td>
        {/* Disabling the key this console is signed in with would lock the console out mid-session. */}
        {own ? <span>this console's key</span> : <button type="button" disabled={busy} onClick={() => void patch({ disabled: !k.disabled })}>{k.disabled ? `Enable ${k.name}` : `Disable ${k.name}`}</button>}
        {error ? <ErrorNotice error={error} /> : null}
      </td>
    </tr>
  );
}

function KeyFigures({ k }: { k: KeyObject }) {
  return (
    <dl>
      <dt>Name</dt><dd>{k.name}</dd>
      <dt>Key</dt><dd><code>{k.label}</code></dd>
      <dt>Limit</dt><dd>{k.limit === null ? 'none' : `${usd(k.limit)} (${usd(k.limit_remaining)} left)`}</dd>
      <dt>Usage</dt><dd>{usd(k.usage)} total, {usd(k.usage_daily)} today, {usd(k.usage_monthly)} this month</dd>
    </dl>
  );
}
