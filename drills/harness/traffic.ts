// Client traffic for the drills: chat calls (JSON and SSE) read by hand, so every way a call can end is told
// apart, and a load of them that runs while a drill breaks things.

/** How one call ended, as the client saw it. */
export type CallEnd =
  /** 200 with a whole answer (a JSON completion, or a stream through `[DONE]`). */
  | 'answered'
  /** Refused before any answer: an error status with the spec's envelope. */
  | 'refused'
  /** A stream that began and ended with the format's error event (the API notes' way to end a failed stream). */
  | 'stream-error'
  /** Nothing listened on the edge's port: the connection was refused, no request was accepted. */
  | 'connection-refused'
  /**
   * The connection closed before any response: a request sent on a kept-alive connection just as the server
   * closed it as idle (HTTP/1.1 cannot warn an idle client; RFC 9112 9.3.1). The server never read it.
   */
  | 'closed-before-response'
  /** A broken answer: a reset or closed connection, a body that stopped, an error without the envelope. */
  | 'broken'
  /** No end within the call's deadline. */
  | 'hang';

export interface CallOutcome {
  end: CallEnd;
  streamed: boolean;
  status: number | null;
  /** The platform request id (`x-request-id`), when the response carried one. */
  requestId: string | null;
  startedAt: number;
  endedAt: number;
  detail: string;
}

export interface ChatCall {
  baseURL: string;
  key: string;
  model: string;
  content: string;
  stream: boolean;
  /** The call counts as a hang past this. */
  deadlineMs: number;
}

/** The spec's error envelope: `{code, error: {message, type, param, code, traceId}, traceId}` with the status as text. */
export function isEnvelope(body: unknown, status: number): boolean {
  const b = body as { code?: unknown; error?: Record<string, unknown>; traceId?: unknown } | null;
  return !!b && b.code === String(status) && typeof b.error?.message === 'string' && typeof b.error?.type === 'string'
    && 'param' in (b.error ?? {}) && typeof b.error?.code === 'string' && typeof b.traceId === 'string';
}

function parseJson(text: string): unknown {
  try { return JSON.parse(text); } catch { return null; }
}

/** The last SSE event of a chat stream, when it is the error envelope the API notes prescribe. */
function endsWithErrorEvent(text: string): boolean {
  const events = text.split('\n\n').filter((e) => e.trim().length > 0);
  const last = events.at(-1) ?? '';
  if (!last.startsWith('data: ')) return false;
  const body = parseJson(last.slice('data: '.length)) as { code?: string } | null;
  return !!body && isEnvelope(body, Number(body.code));
}

function networkEnd(err: unknown): { end: CallEnd; detail: string } {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return { end: 'hang', detail: 'deadline passed' };
  const code = e.cause?.code ?? '';
  if (code === 'ECONNREFUSED') return { end: 'connection-refused', detail: code };
  return { end: 'broken', detail: `${code || e.name}: ${e.cause?.message ?? e.message}` };
}

/** One chat call; never throws: every ending is an outcome. */
export async function chatCall(call: ChatCall): Promise<CallOutcome> {
  const startedAt = Date.now();
  const done = (end: CallEnd, status: number | null, requestId: string | null, detail = ''): CallOutcome =>
    ({ end, streamed: call.stream, status, requestId, startedAt, endedAt: Date.now(), detail });
  let status: number | null = null;
  let requestId: string | null = null;
  try {
    const res = await fetch(`${call.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${call.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: call.model, stream: call.stream, messages: [{ role: 'user', content: call.content }] }),
      signal: AbortSignal.timeout(call.deadlineMs),
    });
    status = res.status;
    requestId = res.headers.get('x-request-id');
    const text = await res.text();
    if (res.status !== 200) {
      const body = parseJson(text) as { error?: { code?: string } } | null;
      return isEnvelope(body, res.status) ? done('refused', status, requestId, body?.error?.code ?? '') : done('broken', status, requestId, `not the envelope: ${text.slice(0, 200)}`);
    }
    if (!call.stream) {
      const body = parseJson(text) as { object?: string } | null;
      return body?.object === 'chat.completion' ? done('answered', status, requestId) : done('broken', status, requestId, `not a completion: ${text.slice(0, 200)}`);
    }
    if (text.includes('data: [DONE]')) return done('answered', status, requestId);
    return endsWithErrorEvent(text) ? done('stream-error', status, requestId) : done('broken', status, requestId, `stream stopped: ${text.slice(-200)}`);
  } catch (err) {
    const { end, detail } = networkEnd(err);
    return done(end === 'broken' && status === null ? 'closed-before-response' : end, status, requestId, detail);
  }
}

export interface Load {
  outcomes: CallOutcome[];
  /** Calls started and not ended at `at`. */
  inFlightAt(at: number): number;
  /** Stops starting calls and waits for the ones under way. */
  stop(): Promise<CallOutcome[]>;
}

export interface LoadOptions {
  workers: number;
  /** The n-th call of a worker (each worker loops until stopped). */
  call: (worker: number, n: number) => ChatCall;
  /** Pause between a worker's calls, so a loop of refusals does not spin. */
  pauseMs?: number;
}

/** Workers calling in a loop until stopped; every outcome is kept. */
export function startLoad(opts: LoadOptions): Load {
  const outcomes: CallOutcome[] = [];
  const starts: { at: number; outcome?: CallOutcome }[] = [];
  let stopped = false;
  const worker = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      const entry: { at: number; outcome?: CallOutcome } = { at: Date.now() };
      starts.push(entry);
      entry.outcome = await chatCall(opts.call(w, n));
      outcomes.push(entry.outcome);
      await new Promise((r) => setTimeout(r, opts.pauseMs ?? 20));
    }
  };
  const running = Promise.all(Array.from({ length: opts.workers }, (_, w) => worker(w)));
  return {
    outcomes,
    inFlightAt: (at) => starts.filter((s) => s.at <= at && (!s.outcome || s.outcome.endedAt > at)).length,
    stop: async () => {
      stopped = true;
      await running;
      return outcomes;
    },
  };
}

/** Outcomes counted by how they ended. */
export function countEnds(outcomes: CallOutcome[]): Record<CallEnd, number> {
  const counts: Record<CallEnd, number> = { answered: 0, refused: 0, 'stream-error': 0, 'connection-refused': 0, 'closed-before-response': 0, broken: 0, hang: 0 };
  for (const o of outcomes) counts[o.end] += 1;
  return counts;
}
