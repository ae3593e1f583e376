import { usdToMicros } from '@gw/platform';
import { waitFor } from './ports';

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Raw HTTP against the edge, for what SDK clients hide (status, headers, the exact error envelope). */
export async function api(baseURL: string, method: string, path: string, opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined || opts.rawBody !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${baseURL}${path}`, {
    method,
    headers,
    body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body };
}

export async function spendableMicros(baseURL: string, key: string): Promise<number> {
  const res = await api(baseURL, 'GET', '/billing/balance', { key });
  if (res.status !== 200) throw new Error(`balance: ${res.status} ${JSON.stringify(res.body)}`);
  return usdToMicros(res.body.data.spendable);
}

/** Polls the billing lookup until the call is recorded (usage events are consumed asynchronously). */
export async function waitForBilledRequest(baseURL: string, key: string, id: string): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  let record: unknown;
  await waitFor(`billing record ${id}`, async () => {
    const res = await api(baseURL, 'GET', `/billing/requests/${id}`, { key });
    if (res.status === 200) record = res.body.data;
    return res.status === 200;
  }, 30_000);
  return record;
}

/** The spec's error envelope, with the status as text and the trace id in both places. */
export function expectEnvelope(res: ApiResponse, status: number, code?: string, param?: string | null): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({
    code: String(status),
    error: {
      message: expect.any(String),
      type: expect.any(String),
      // `param` must be present (null when no single parameter is at fault); checked exactly when given.
      param: param === undefined ? res.body?.error?.param ?? null : param,
      code: code ?? expect.any(String),
      traceId: expect.any(String),
    },
    traceId: res.body.error.traceId,
  });
  expect(res.body.error).toHaveProperty('param');
}
