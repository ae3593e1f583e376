import { usdToMicros } from '@gw/platform';
import { api, spendableMicros, waitForBilledRequest } from './harness/api';
import { E2E_MODEL, E2E_SLOW_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useStack } from './harness/stack';

jest.setTimeout(120_000);

const chatBody = (content: string) => ({ model: E2E_MODEL, messages: [{ role: 'user', content }] });
/** The simulator credential and the slow model's deployment, as the e2e catalogue and stack set them. */
const E2E_SIMULATOR_KEY = 'e2e-simulator-key';
const E2E_SLOW_DEPLOYMENT = 'e2e-slow-simulator';

interface AsyncJob {
  id: string;
  status: string;
  request_id: string;
  completion?: { id: string };
}

/** Faults only separate processes can have: one service dies while the others keep running. */
describe('faults in the multi-process stack', () => {
  const stack = useStack('processes');
  const pollJob = (id: string) => stack.openai.get<AsyncJob>(`/async/chat/completions/${id}`);

  test('a restarted billing serves at once while its consumer rejoins, then bills what was used meanwhile', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    await stack.processes!.kill('billing', 'SIGKILL');
    await stack.processes!.start('billing');

    // The killed member still holds the consumer group (its session has not expired), yet billing serves:
    // balances, and the pre-authorization of a new call.
    const ready = await stack.processes!.readiness('billing');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.store).toBe(true);
    // Its consumers rejoin in the background: the ledger's certainly has not yet; the archive's may have.
    expect(ready.body.degraded).toContain('usage-consumer');
    expect(ready.body.degraded.every((d: string) => ['usage-consumer', 'archive-consumer', 'call-failures-consumer'].includes(d))).toBe(true);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before);
    let call: Awaited<ReturnType<typeof api>> | undefined;
    // inference's billing channel reconnects with back-off after the restart.
    await waitFor('a call served', async () => (call = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: chatBody('used while billing rejoins') })).status === 200, 30_000);

    // Once the consumer has joined in the background, the usage that waited in the bus is billed.
    const record = await waitForBilledRequest(stack.baseURL, stack.key, call!.headers.get('x-request-id')!);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - usdToMicros(record.charged_cost));
    await waitFor('billing settled', async () => (await stack.processes!.readiness('billing')).body.degraded.length === 0, 60_000);
  });

  test('while the keys service is down, the edge serves a key it verified recently and refuses one it never saw', async () => {
    const created = await api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name: 'never verified' } });
    expect(created.status).toBeLessThan(300);
    const verified = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: chatBody('verify me') });
    expect(verified.status).toBe(200);

    await stack.processes!.kill('keys', 'SIGKILL');
    try {
      // Past the e2e cache TTL (1 s): these are served from the stale window, not the fresh cache.
      await new Promise((r) => setTimeout(r, 1_500));
      const stale = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: chatBody('served while keys is down') });
      expect(stale.status).toBe(200);
      const unknown = await api(stack.baseURL, 'POST', '/chat/completions', { key: created.body.key, body: chatBody('not verified yet') });
      expect(unknown.status).toBe(503);
      // No new key can be authenticated: the edge leaves the rotation.
      await waitFor('edge not ready', async () => (await stack.processes!.readiness('edge')).status === 503, 20_000);
    } finally {
      await stack.processes!.start('keys');
    }
    await waitFor('edge ready again', async () => (await stack.processes!.readiness('edge')).status === 200, 30_000);
    const fresh = await api(stack.baseURL, 'POST', '/chat/completions', { key: created.body.key, body: chatBody('verified now') });
    expect(fresh.status).toBe(200);
  });

  test('an async job re-run after its inference process died gets the first generation back from the provider', async () => {
    const body = { model: E2E_SLOW_MODEL, messages: [{ role: 'user', content: 'generate me once' }] };
    const job = await stack.openai.post<AsyncJob>('/async/chat/completions', { body });
    await waitFor('job in progress', async () => (await pollJob(job.id)).status === 'in_progress', 10_000);
    await stack.processes!.kill('inference', 'SIGKILL');
    await stack.processes!.start('inference');

    let done: AsyncJob | undefined;
    await waitFor('job completed', async () => (done = await pollJob(job.id)).status === 'completed', 45_000);
    // The provider holds one completion under the job's key: asked again with that key, it answers with the
    // very completion the job returned, so every run of the job sent the same key and got the same answer.
    const upstream = await fetch(`${stack.slowSimulatorURL}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', authorization: `Bearer ${E2E_SIMULATOR_KEY}`, 'x-sim-latency-ms': '0',
        'idempotency-key': `${job.request_id}:${E2E_SLOW_DEPLOYMENT}`,
      },
      body: JSON.stringify({ ...body, model: 'echo-chat' }),
    });
    expect(upstream.headers.get('idempotent-replayed')).toBe('true');
    expect(((await upstream.json()) as { id: string }).id).toBe(done!.completion!.id);
  });
});
