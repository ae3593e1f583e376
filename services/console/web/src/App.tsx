import { useEffect, useState, type FormEvent, type MouseEvent } from 'react';
import { api, session, type CurrentKey } from './api';
import { ErrorNotice, useAction } from './components';
import { BatchesPage } from './pages/BatchesPage';
import { KeysPage } from './pages/KeysPage';
import { RequestsPage } from './pages/RequestsPage';
import { UsagePage } from './pages/UsagePage';
import { WebhooksPage } from './pages/WebhooksPage';

const BASE = '/console';

const PAGES = [
  { path: 'keys', title: 'Keys', Page: KeysPage },
  { path: 'usage', title: 'Balance and usage', Page: UsagePage },
  { path: 'requests', title: 'Request lookup', Page: RequestsPage },
  { path: 'webhooks', title: 'Webhooks', Page: WebhooksPage },
  { path: 'batches', title: 'Batches and videos', Page: BatchesPage },
] as const;

type PagePath = (typeof PAGES)[number]['path'];

function pageFromLocation(): PagePath {
  const name = window.location.pathname.slice(BASE.length).replace(/^\/+|\/+$/g, '');
  return PAGES.find((p) => p.path === name)?.path ?? 'keys';
}

export function App() {
  const [me, setMe] = useState<CurrentKey | null>(null);
  const [checking, setChecking] = useState(Boolean(session.key()));
  const [page, setPage] = useState<PagePath>(pageFromLocation);

  useEffect(() => {
    const onPop = () => setPage(pageFromLocation());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);

  // A key kept from earlier in this tab is checked again: it may have been disabled since.
  useEffect(() => {
    if (!session.key()) return;
    api<{ data: CurrentKey }>('/v1/key').then(
      (r) => { setMe(r.data); setChecking(false); },
      () => { session.signOut(); setChecking(false); },
    );
  }, []);

  useEffect(() => {
    const current = PAGES.find((p) => p.path === page);
    document.title = me && current ? `${current.title} · Gateway console` : 'Gateway console';
  }, [page, me]);

  if (checking) return <main><p role="status">Checking the saved key…</p></main>;
  if (!me) return <SignIn onSignedIn={setMe} />;

  const go = (path: PagePath) => (e: MouseEvent<HTMLAnchorElement>) => {
    e.preventDefault();
    window.history.pushState(null, '', `${BASE}/${path}`);
    setPage(path);
  };
  const signOut = () => { session.signOut(); setMe(null); };
  const { Page, title } = PAGES.find((p) => p.path === page)!;

  return (
    <>
      <header>
        <strong>Gateway console</strong>
        <nav aria-label="Console pages">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <a href={`${BASE}/${p.path}`} onClick={go(p.path)} aria-current={p.path === page ? 'page' : undefined}>{p.title}</a>
              </li>
            ))}
          </ul>
        </nav>
        <p className="who">
          Signed in as <span aria-label="Signed-in key">{me.name} ({me.label})</span>
          {me.is_management_key ? ' · management key' : ''}
          {' '}<button type="button" onClick={signOut}>Sign out</button>
        </p>
      </header>
      <main>
        <h1>{title}</h1>
        <Page me={me} />
      </main>
    </>
  );
}

function SignIn({ onSignedIn }: { onSignedIn: (me: CurrentKey) => void }) {
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const secret = key.trim();
      const r = await api<{ data: CurrentKey }>('/v1/key', { key: secret });
      session.signIn(secret);
      setKey('');
      onSignedIn(r.data);
    });
  };
  return (
    <main className="sign-in">
      <h1>Gateway console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <label htmlFor="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" spellCheck={false} value={key} onChange={(e) => setKey(e.target.value)} required />
        <button type="submit" disabled={busy}>Sign in</button>
        <p className="hint">The key is kept in this browser tab only (session storage) and sent as a Bearer token to this gateway.</p>
      </form>
      {error ? <ErrorNotice error={error} /> : null}
    </main>
  );
}
