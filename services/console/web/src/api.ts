/** The public API on the same edge the console was served from, called with the signed-in API key. */

const KEY_STORAGE = 'gw-console-key';

/** The key lives in this tab's session only: closing the tab signs out, and no other tab or cookie sees it. */
export const session = {
  key: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  signIn: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  signOut: () => sessionStorage.removeItem(KEY_STORAGE),
};

/** A refusal from the API, from its error envelope (or the key endpoints' plain JSON shape). */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly code: string | null, readonly param: string | null) {
    super(message);
  }

  /** The gateway has no such route: the feature is not deployed here (as opposed to an unknown id). */
  get routeMissing(): boolean {
    return this.status === 404 && this.code === 'route_not_found';
  }
}

interface ErrorBody {
  code?: unknown;
  error?: { message?: unknown; code?: unknown; param?: unknown };
}

function toApiError(status: number, body: unknown): ApiError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as ErrorBody;
  const message = typeof b.error?.message === 'string' ? b.error.message : `HTTP ${status}`;
  const code = typeof b.error?.code === 'string' ? b.error.code : typeof b.code === 'string' ? b.code : null;
  const param = typeof b.error?.param === 'string' ? b.error.param : null;
  return new ApiError(status, message, code, param);
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export async function api<T>(path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<T> {
  const key = init.key ?? session.key();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body), cache: 'no-store',
  });
  const body = await readJson(res);
  if (!res.ok) throw toApiError(res.status, body);
  return body as T;
}

export const query = (params: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')).toString();

// Shapes of the API answers the console reads (spec and /work/shared notes), only the fields it shows.

export interface KeyObject {
  hash: string; name: string; label: string; disabled: boolean;
  limit: number | null; limit_remaining: number | null; limit_reset: 'daily' | 'weekly' | 'monthly' | null;
  usage: number; usage_daily: number; usage_weekly: number; usage_monthly: number;
  created_at: string; expires_at: string | null;
}

export interface CurrentKey extends KeyObject { is_management_key: boolean }

export interface Balance { wallet: string; credit: string; spendable: string; currency: string }

export interface UsageRow {
  start: string | number; end: string | number;
  model?: string; key_hash?: string; provider?: string; api_type?: string;
  requests: number; errors: number; prompt_tokens: number; completion_tokens: number;
  /** Messages-style calls count input and output tokens; `total_tokens` covers every kind. */
  input_tokens?: number; output_tokens?: number; total_tokens?: number;
  list_cost: string; charged_cost: string;
  latency_ms_p50?: number | null; latency_ms_p95?: number | null; ttft_ms_p50?: number | null; ttft_ms_p95?: number | null;
}

export interface ArchivedCall {
  request_id: string; request: unknown; response: unknown; streamed: boolean; truncated: boolean; created_at: string;
  /** `metadata`: the bodies were not kept for this call. */
  mode?: 'full' | 'metadata'; trace_id?: string | null;
}

export interface WebhookSettings { url: string | null; has_secret: boolean; updated_at: string | null; secret?: string }

export interface Delivery {
  id: string; event_id: string; event: string; url: string; status: string; attempt: number;
  response_code: number | null; latency_ms: number | null; error: string | null; created_at: string;
}

export interface Batch {
  id: string; endpoint: string; status: string; created_at: number;
  request_counts: { total: number; completed: number; failed: number };
}

export interface Video { id: string; status: string; model: string; prompt?: string; progress: number | null; video_url?: string; error?: { code: string; message: string } }
