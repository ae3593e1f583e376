import { api } from './harness/api';
import { E2E_FALLBACK_MODEL, E2E_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useStack } from './harness/stack';

const KEY_RPM = 20;
const KEY_TPM = 50;

/** The limits count in whole minutes: a test that must stay within one starts early enough in it. */
async function startingBefore(second: number): Promise<void> {
  const now = new Date().getUTCSeconds();
  if (now > second) await new Promise((r) => setTimeout(r, (61 - now) * 1000));
}

/** The value of the first sample of `name` whose labels include every one of `labels`, or null. */
async function sample(url: string, name: string, labels: Record<string, string>): Promise<number | null> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').at(-1)) : null;
}

describe('operators: rate limits across two edge instances, /metrics after real calls (processes)', () => {
  const stack = useStack('processes', {
    secondInference: {},
    env: { RATE_LIMIT_KEY_RPM: String(KEY_RPM), RATE_LIMIT_KEY_TPM: String(KEY_TPM) },
  });

  async function newKey(name: string): Promise<string> {
    const res = await api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name } });
    expect(res.status).toBe(201);
    return res.body.key;
  }

  const chat = (baseURL: string, key: string, content = 'hello') =>
    api(baseURL, 'POST', '/chat/completions', { key, body: { model: E2E_MODEL, messages: [{ role: 'user', content }] } });

  test('a key\'s requests per minute hold across both edges: the one over the limit is a 429 at either', async () => {
    const key = await newKey('rpm across edges');
    await startingBefore(40);
    const edges = [stack.baseURL, stack.secondBaseURL!];
    const admitted = await Promise.all(Array.from({ length: KEY_RPM }, (_, i) => api(edges[i % 2]!, 'GET', '/key', { key })));
    expect(admitted.map((r) => r.status)).toEqual(Array(KEY_RPM).fill(200));
    for (const base of edges) {
      const refused = await api(base, 'GET', '/key', { key });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('x-ratelimit-limit-requests')).toBe(String(KEY_RPM));
      expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    }
  }, 120_000);

  test('tokens a call used through one edge count at the other: the key is refused there once its tokens per minute are spent', async () => {
    const key = await newKey('tpm across edges');
    await startingBefore(20);
    // The simulator counts words as tokens: this prompt alone is over the limit.
    const first = await chat(stack.baseURL, key, 'word '.repeat(KEY_TPM + 10));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe(String(KEY_TPM));
    let refused: Awaited<ReturnType<typeof chat>> | undefined;
    await waitFor('the call\'s tokens to reach the other edge', async () => {
      await new Promise((r) => setTimeout(r, 1_500)); // stays under the key's requests per minute while polling
      refused = await chat(stack.secondBaseURL!, key);
      return refused.status === 429;
    }, 25_000);
    expect(refused!.body.error.message).toMatch(new RegExp(`${KEY_TPM} tokens per minute for this key`));
    expect(refused!.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
  }, 120_000);

  test('every service\'s /metrics shows the domain series with their labels after real calls', async () => {
    const key = await newKey('metrics');
    expect((await chat(stack.baseURL, key, 'count these four words')).status).toBe(200);
    expect((await api(stack.baseURL, 'POST', '/chat/completions', { key, body: { model: E2E_FALLBACK_MODEL, messages: [{ role: 'user', content: 'fall back' }] } })).status).toBe(200);
    const { inferenceURL, billingURL, webhooksURL, batchURL, edgeAdminURL } = stack.internal;

    expect(await sample(edgeAdminURL, 'gw_http_requests_total', { route: '/v1/chat/completions', status: '200', service: 'edge' })).toBeGreaterThanOrEqual(2);
    expect(await sample(edgeAdminURL, 'gw_edge_rate_limited_total', { scope: 'key', budget: 'requests' })).toBeGreaterThanOrEqual(1);
    expect(await sample(edgeAdminURL, 'gw_edge_key_lookups_total', { outcome: 'valid' })).toBeGreaterThanOrEqual(1);

    const model = { model: E2E_MODEL, provider: 'simulator' };
    expect(await sample(inferenceURL, 'gw_provider_calls_total', { ...model, status: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(await sample(inferenceURL, 'gw_provider_calls_total', { model: E2E_FALLBACK_MODEL, status: '503' })).toBeGreaterThanOrEqual(1);
    expect(await sample(inferenceURL, 'gw_upstream_retries_total', { deployment: 'e2e-failing' })).toBeGreaterThanOrEqual(1);
    expect(await sample(inferenceURL, 'gw_upstream_fallbacks_total', { model: E2E_FALLBACK_MODEL, deployment: 'e2e-failing' })).toBeGreaterThanOrEqual(1);
    expect(await sample(inferenceURL, 'gw_upstream_latency_seconds_count', model)).toBeGreaterThanOrEqual(1);
    expect(await sample(inferenceURL, 'gw_time_to_first_token_seconds_count', model)).toBeGreaterThanOrEqual(1);
    expect(await sample(inferenceURL, 'gw_tokens_total', { ...model, kind: 'input' })).toBeGreaterThanOrEqual(4);
    expect(await sample(inferenceURL, 'gw_jobs_queue_depth', { kind: 'chat.completion', state: 'queued' })).not.toBeNull();

    await waitFor('billing to count the cost', async () => ((await sample(billingURL, 'gw_cost_micros_total', { ...model, kind: 'charged' })) ?? 0) > 0);
    expect(await sample(billingURL, 'gw_cost_micros_total', { ...model, kind: 'list' })).toBeGreaterThan(0);
    expect(await sample(billingURL, 'gw_bus_consumer_lag', { group: 'billing-ledger', topic: 'gateway.usage.v1' })).not.toBeNull();
    expect(await sample(webhooksURL, 'gw_jobs_oldest_queued_age_seconds', {})).not.toBeNull();
    expect(await sample(batchURL, 'gw_jobs_queue_depth', { state: 'in_progress' })).not.toBeNull();
  }, 120_000);
});

describe('operators: rate limits in the single-machine mode (embedded)', () => {
  const stack = useStack('embedded', { env: { RATE_LIMIT_ACCOUNT_RPM: '3', CORS_ALLOWED_ORIGINS: 'https://console.example' } });

  test('an account\'s requests per minute: the one over the limit is a 429 with Retry-After, readable by a browser client', async () => {
    await startingBefore(50);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await api(stack.baseURL, 'GET', '/key', { key: stack.key })).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await api(stack.baseURL, 'GET', '/key', { key: stack.key, headers: { origin: 'https://console.example' } });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/3 requests per minute for this account/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(refused.headers.get('access-control-expose-headers')).toContain('retry-after');
  }, 120_000);
});
