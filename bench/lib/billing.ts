/** Waiting for usage events to reach the balance, and the check that every answered call was billed once. */
import { request } from 'undici';
import { usdToMicros } from '@gw/platform';
import { sleep } from './net';

/**
 * The balance once the charges have landed: at least `minMicros` below `startMicros` (or 60 s passed),
 * then unchanged over two more seconds, so that a late or duplicate charge would show.
 */
export async function settledBalance(readBalance: () => Promise<number>, startMicros: number, minMicros: number): Promise<number> {
  let balance = await readBalance();
  const deadline = Date.now() + 60_000;
  while (startMicros - balance < minMicros && Date.now() < deadline) {
    await sleep(500);
    balance = await readBalance();
  }
  for (let stable = 0; stable < 2 && Date.now() < deadline;) {
    await sleep(1000);
    const next = await readBalance();
    stable = next === balance ? stable + 1 : 0;
    balance = next;
  }
  return balance;
}

export interface BillingCheck {
  balance_start_usd: string;
  balance_end_usd: string;
  billed_usd: string;
  per_call_usd: string;
  answered: number;
  calls_billed: number | null;
  unanswered_max: number;
  ok: boolean;
}

/**
 * Billed once each: the balance fell by a whole number of calls, at least the answered ones and at most
 * those plus `unanswered` (calls the upstream served but the load generator never saw finish).
 */
export function checkBilling(startMicros: number, endMicros: number, perCallMicros: number, answered: number, unanswered: number): BillingCheck {
  const billed = startMicros - endMicros;
  const calls = perCallMicros > 0 ? billed / perCallMicros : null;
  return {
    balance_start_usd: (startMicros / 1e6).toFixed(6),
    balance_end_usd: (endMicros / 1e6).toFixed(6),
    billed_usd: (billed / 1e6).toFixed(6),
    per_call_usd: (perCallMicros / 1e6).toFixed(6),
    answered,
    calls_billed: calls,
    unanswered_max: unanswered,
    ok: billed > 0 && calls !== null && Number.isInteger(calls) && calls >= answered && calls <= answered + unanswered,
  };
}

/** Reads the seeded account's spendable balance, in micro-USD, from a gateway's edge. */
export function balanceReader(origin: string, headers: Record<string, string>): () => Promise<number> {
  return async () => {
    const res = await request(`${origin}/v1/billing/balance`, { headers, headersTimeout: 5000, bodyTimeout: 5000 });
    const body = (await res.body.json()) as { data?: { spendable?: string } };
    if (res.statusCode !== 200 || typeof body.data?.spendable !== 'string') throw new Error(`balance at ${origin}: HTTP ${res.statusCode} ${JSON.stringify(body)}`);
    return usdToMicros(body.data.spendable);
  };
}
