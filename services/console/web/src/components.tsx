import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { ApiError } from './api';

/** A refusal shown in words; a feature this gateway does not serve is a notice, not a failure. */
export function ErrorNotice({ error, feature }: { error: unknown; feature?: string }) {
  if (error instanceof ApiError && error.routeMissing && feature) {
    return <p role="status" className="notice">Not available on this gateway: {feature}.</p>;
  }
  const message = error instanceof ApiError
    ? `${error.message}${error.param ? ` (${error.param})` : ''}`
    : error instanceof Error ? error.message : String(error);
  return <p role="alert" className="error">{message}</p>;
}

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Loads once on mount and on `reload()`; the last answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean }>({ data: null, error: null, loading: true });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => { if (current) setState({ data, error: null, loading: false }); },
      (error: unknown) => { if (current) setState({ data: null, error, loading: false }); },
    );
    return () => { current = false; };
  }, [generation, ...deps]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

/** Calls `reload` every `everyMs` while `active` (a job still running), so its progress moves on screen. */
export function useRefreshWhile(active: boolean, reload: () => void, everyMs = 2000) {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(reload, everyMs);
    return () => clearInterval(timer);
  }, [active, reload, everyMs]);
}

/** Runs one action at a time and keeps its error for display. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

/** A secret the API shows once: shown here once, with that said, until dismissed. */
export function SecretOnce({ label, secret, onDismiss }: { label: string; secret: string; onDismiss: () => void }) {
  return (
    <section aria-label={label} className="secret">
      <h3>{label}</h3>
      <p>Copy it now: it is shown only this once and cannot be retrieved later.</p>
      <output aria-label={`${label} value`}><code>{secret}</code></output>
      <button type="button" onClick={onDismiss}>I have stored it</button>
    </section>
  );
}

export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section aria-labelledby={slug(title)}>
      <h2 id={slug(title)}>{title}</h2>
      {children}
    </section>
  );
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
