// A steady load of chat calls through the edge, each timed and judged: served, failed cleanly in the spec's
// error envelope (before or inside a stream), or not (a hang past the client's deadline, a cut connection).

export interface ChatClient {
  name: string;
  key: string;
  /** Streams every call, none, or every other one. */
  stream: 'always' | 'never' | 'alternate';
  /** Pause between one call's end and the next call. */
  pauseMs: number;
}

export interface CallOutcome {
  client: string;
  /** What the drill was doing when the call started (a label the drill sets). */
  phase: string;
  streamed: boolean;
  status: number;
  requestId: string | null;
  startedAt: number;
  durationMs: number;
  /** 200 and a complete answer (a stream ended with `[DONE]`). */
  served: boolean;
  /** Not served, and said so in the spec's error envelope (the response's body, or a stream's error event). */
  cleanFailure: boolean;
  /** The envelope's `error.code`, or what went wrong when there was no envelope. */
  error: string | null;
}

export interface ChatLoadOptions {
  baseURL: string;
  clients: ChatClient[];
  body: Record<string, unknown>;
  /** A call still running after this is aborted and counted as hung. */
  deadlineMs: number;
  /** The drill's current phase, read as each call starts. */
  phase: () => string;
}

export interface ChatLoad {
  outcomes: CallOutcome[];
  /** Stops starting calls and resolves once the running ones have finished. */
  stop(): Promise<void>;
}

type Envelope = { code: string; error: { message: string; type: string; param: unknown; code: string; traceId: string }; traceId: string };

/** The spec's error envelope, with the status as text in `code` when the status is known. */
export function isErrorEnvelope(body: unknown, status?: number): body is Envelope {
  const b = body as Envelope | null;
  if (!b || typeof b !== 'object' || !b.error || typeof b.error !== 'object') return false;
  const e = b.error;
  return typeof e.message === 'string' && typeof e.type === 'string' && 'param' in e && typeof e.code === 'string'
    && typeof e.traceId === 'string' && b.traceId === e.traceId && (status === undefined || b.code === String(status));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A finished SSE body: served when it ends with `[DONE]`, a clean failure when a `data:` line holds the envelope. */
function judgeStream(text: string): Pick<CallOutcome, 'served' | 'cleanFailure' | 'error'> {
  const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
  if (data[data.length - 1] === '[DONE]') return { served: true, cleanFailure: false, error: null };
  const failure = data.map(parseJson).find((d) => isErrorEnvelope(d));
  if (failure) return { served: false, cleanFailure: true, error: (failure as Envelope).error.code };
  return { served: false, cleanFailure: false, error: 'stream ended without [DONE] or an error event' };
}

async function oneCall(opts: ChatLoadOptions, client: ChatClient, streamed: boolean): Promise<CallOutcome> {
  const startedAt = Date.now();
  const outcome = { client: client.name, phase: opts.phase(), streamed, startedAt, status: 0, requestId: null as string | null };
  try {
    const res = await fetch(`${opts.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...opts.body, ...(streamed ? { stream: true, stream_options: { include_usage: true } } : {}) }),
      signal: AbortSignal.timeout(opts.deadlineMs),
    });
    const text = await res.text();
    const base = { ...outcome, status: res.status, requestId: res.headers.get('x-request-id'), durationMs: Date.now() - startedAt };
    if (res.status === 200 && streamed) return { ...base, ...judgeStream(text) };
    const body = parseJson(text);
    if (res.status === 200) {
      const served = Array.isArray((body as { choices?: unknown } | null)?.choices);
      return { ...base, served, cleanFailure: false, error: served ? null : 'a 200 without a completion' };
    }
    const clean = isErrorEnvelope(body, res.status);
    return { ...base, served: false, cleanFailure: clean, error: clean ? (body as Envelope).error.code : `status ${res.status} without the envelope: ${text.slice(0, 200)}` };
  } catch (err) {
    const e = err as Error;
    const hung = e.name === 'TimeoutError';
    return { ...outcome, durationMs: Date.now() - startedAt, served: false, cleanFailure: false, error: hung ? `no answer within ${opts.deadlineMs} ms` : `${e.name}: ${e.message}` };
  }
}

/** Starts every client's loop of calls, one call at a time per client. */
export function startChatLoad(opts: ChatLoadOptions): ChatLoad {
  const outcomes: CallOutcome[] = [];
  let stopped = false;
  const loops = opts.clients.map(async (client) => {
    for (let i = 0; !stopped; i++) {
      const streamed = client.stream === 'always' || (client.stream === 'alternate' && i % 2 === 1);
      outcomes.push(await oneCall(opts, client, streamed));
      if (client.pauseMs > 0 && !stopped) await new Promise((r) => setTimeout(r, client.pauseMs));
    }
  });
  return {
    outcomes,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** Counts of outcomes, by what happened. */
export function tally(outcomes: CallOutcome[]) {
  return {
    calls: outcomes.length,
    served: outcomes.filter((o) => o.served).length,
    failedCleanly: outcomes.filter((o) => o.cleanFailure).length,
    unclean: outcomes.filter((o) => !o.served && !o.cleanFailure).length,
    maxDurationMs: outcomes.reduce((m, o) => Math.max(m, o.durationMs), 0),
  };
}

/** How many failed with each error code (or problem). */
export function errorsByCode(outcomes: CallOutcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) if (!o.served) counts[`${o.status}:${o.error}`] = (counts[`${o.status}:${o.error}`] ?? 0) + 1;
  return counts;
}
