// Exactly-once billing as a client can check it: the billing lookup of each request id, and the balance.
import { usdToMicros } from '@gw/platform';
import { api, spendableMicros } from '../../test-e2e/harness/api';
import { waitFor } from '../../test-e2e/harness/ports';

export interface BillingCheck {
  /** Request ids found billed, one record each. */
  billed: number;
  /** Ids the drill expected billed that the lookup never found. */
  missing: string[];
  /** Sum of the records' charged costs. */
  chargedMicros: number;
  /** Each billed id's charge. */
  charges: Map<string, number>;
  /** What the balance fell by since `before`. */
  balanceDropMicros: number;
}

/** Billing records of `ids` (polled until each is found, or the deadline), a few lookups at a time. */
async function lookUp(baseURL: string, key: string, ids: string[], deadlineMs: number): Promise<{ found: Map<string, number>; missing: string[] }> {
  const found = new Map<string, number>();
  const deadline = Date.now() + deadlineMs;
  let pending = [...ids];
  while (pending.length > 0 && Date.now() < deadline) {
    const still: string[] = [];
    for (let i = 0; i < pending.length; i += 8) {
      const slice = pending.slice(i, i + 8);
      const answers = await Promise.all(slice.map((id) => api(baseURL, 'GET', `/billing/requests/${id}`, { key }).catch(() => null)));
      answers.forEach((res, j) => {
        // Found by the request id or by what else names the call (a video's id).
        if (res?.status === 200) found.set(slice[j], usdToMicros(res.body.data.charged_cost));
        else still.push(slice[j]);
      });
    }
    pending = still;
    if (pending.length > 0) await new Promise((r) => setTimeout(r, 500));
  }
  return { found, missing: pending };
}

/**
 * Every id in `ids` billed once: each has its record, and the balance fell by exactly their sum (a charge
 * applied twice, or one for a call not in `ids`, shows as a larger drop). Waits for the balance to settle,
 * then looks again a moment later, so a late duplicate is seen too.
 */
export async function checkBilledOnce(baseURL: string, key: string, ids: string[], beforeMicros: number, deadlineMs = 60_000): Promise<BillingCheck> {
  const { found, missing } = await lookUp(baseURL, key, [...new Set(ids)], deadlineMs);
  const chargedMicros = [...found.values()].reduce((a, b) => a + b, 0);
  const drop = async () => beforeMicros - (await spendableMicros(baseURL, key));
  await waitFor('the balance to settle', async () => (await drop()) >= chargedMicros, 30_000).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 2_000));
  return { billed: found.size, missing, chargedMicros, charges: found, balanceDropMicros: await drop() };
}

/** Ids whose billing lookup answers a record (they must not have been billed). */
export async function billedAmong(baseURL: string, key: string, ids: string[]): Promise<string[]> {
  const answers = await Promise.all(ids.map((id) => api(baseURL, 'GET', `/billing/requests/${id}`, { key })));
  return ids.filter((_id, i) => answers[i].status === 200);
}
