// Calls through the edge for the drills: each one bounded by a deadline (a hang is an outcome, never a stuck
// drill), classified by what the client saw (status and error code, or how a stream ended), and tallied.

/** The spec's error envelope: `{"code","error":{"message","type","param","code","traceId"},"traceId"}`. */
export function isErrorEnvelope(body: unknown): boolean {
  const b = body as { code?: unknown; traceId?: unknown; error?: Record<string, unknown> } | null;
  const e = b?.error;
  return typeof b?.code === 'string' && typeof b.traceId === 'string' && typeof e === 'object' && e !== null
    && typeof e.message === 'string' && typeof e.type === 'string' && typeof e.code === 'string'
    && (e.param === null || typeof e.param === 'string') && typeof e.traceId === 'string';
}

export type StreamFormat = 'chat' | 'messages' | 'responses';

export interface CallResult {
  /** HTTP status, or `hang` (no answer by the deadline) / `error` (the connection failed). */
  status: number | 'hang' | 'error';
  ms: number;
  /** Time to the response headers. */
  headersMs: number;
  text: string;
  headers: Headers;
}

/** A POST to the edge with `key`, given up (as `hang`) after `deadlineMs`. */
export async function boundedPost(baseURL: string, key: string, path: string, body: unknown, deadlineMs: number): Promise<CallResult> {
  const started = performance.now();
  let headersMs = 0;
  try {
    const res = await fetch(`${baseURL}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deadlineMs),
    });
    headersMs = performance.now() - started;
    const text = await res.text();
    return { status: res.status, ms: performance.now() - started, headersMs, text, headers: res.headers };
  } catch (err) {
    const status = (err as Error).name === 'TimeoutError' ? 'hang' : 'error';
    return { status, ms: performance.now() - started, headersMs, text: String(err), headers: new Headers() };
  }
}

/**
 * What the client saw: `200` for a JSON answer, `<status> <error code>` for an error in the envelope (else
 * `<status> not-envelope`); for a stream, `200 done` when it finished, `200 error-event <code>` when it ended
 * with its format's error event, `200 cut` when it just stopped.
 */
export function outcomeOf(r: CallResult, stream: StreamFormat | null): string {
  if (typeof r.status !== 'number') return r.status;
  if (r.status !== 200) {
    const body = parseOrNull(r.text);
    return `${r.status} ${isErrorEnvelope(body) ? (body as { error: { code: string } }).error.code : 'not-envelope'}`;
  }
  if (stream === null) return '200';
  const blocks = r.text.split('\n\n').map((b) => b.trim()).filter((b) => b !== '' && !b.startsWith(':'));
  const last = blocks.at(-1) ?? '';
  const data = parseOrNull(last.split('\n').find((l) => l.startsWith('data: '))?.slice('data: '.length) ?? '');
  if (stream === 'chat') {
    if (last === 'data: [DONE]') return '200 done';
    return isErrorEnvelope(data) ? `200 error-event ${(data as { error: { code: string } }).error.code}` : '200 cut';
  }
  const event = last.split('\n').find((l) => l.startsWith('event: '))?.slice('event: '.length);
  if (event === (stream === 'messages' ? 'message_stop' : 'response.completed')) return '200 done';
  if (event !== 'error') return '200 cut';
  // Messages: Anthropic's `{"type":"error","error":{"type"}}`; responses: `{"type":"error","code"}`.
  const d = data as { error?: { type?: string }; code?: string } | null;
  return `200 error-event ${d?.error?.type ?? d?.code ?? 'unknown'}`;
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Runs `n` calls, at most `concurrency` at a time. */
export async function burst<T>(n: number, concurrency: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(n);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, async () => {
    while (next < n) {
      const i = next++;
      results[i] = await call(i);
    }
  }));
  return results;
}

/** `{outcome: count}`, e.g. `{"200": 18, "502 upstream_error": 2}`. */
export function tally(outcomes: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  return counts;
}
