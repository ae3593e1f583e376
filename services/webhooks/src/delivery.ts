import { setTimeout as sleep } from 'node:timers/promises';
import { interruptReason, type JobHandler, type JobRun } from '@gw/jobs';
import type { GuardedHttpClient } from '@gw/net-guard';
import { inConsumerSpan, traceOutgoing, UpstreamError, type Logger, type Metrics } from '@gw/platform';
import type { DeliveryAttemptDoc, DeliveryLog } from './delivery-log';
import { DELIVERY_POLICIES, type CallbackKind, type DeliveryPolicy } from './delivery-policy';
import { signatureHeaders } from './signature';
import type { SecretBox } from './signing-secret';
import type { SettingsStore } from './settings-store';

/** The job kind of callback deliveries in the jobs collection. */
export const DELIVERY_JOB_KIND = 'webhook.delivery';

/** One callback to deliver; the job's id is `event_id`, so an event is delivered by one job only. */
export interface DeliveryPayload {
  event_id: string;
  account_id: string;
  kind: CallbackKind;
  event: string;
  /** Resolved when the event was accepted (its own URL, else the account's default then). */
  url: string;
  /** Sent byte for byte; the signatures cover it. */
  body_json: string;
  signed: boolean;
  /** The trace the delivery joins (the request that raised the event); absent in jobs queued before it existed. */
  traceparent?: string | null;
}

export interface DeliveryResult {
  delivered: boolean;
  attempts: number;
  response_status: number | null;
}

export interface DeliveryDeps {
  log: DeliveryLog;
  settings: SettingsStore;
  secrets: SecretBox;
  client: GuardedHttpClient;
  logger: Logger;
  now?: () => number;
  /** Where attempts are counted by outcome (the service's /metrics). */
  metrics?: Metrics;
}

const USER_AGENT = 'gateway-webhooks/1';

type AttemptOutcome = { succeeded: boolean; responseStatus: number | null };

/**
 * Delivers one callback under its job's lease, per its kind's policy. Every attempt is written to the
 * delivery log before it leaves, so a run that resumes a job (its instance died or stopped) counts what was
 * already tried and waits out the rest of the backoff: the policy holds across restarts, and a delivery
 * acknowledged once is never sent again.
 */
export function deliveryHandler(deps: DeliveryDeps): JobHandler<DeliveryPayload, DeliveryResult> {
  const now = deps.now ?? Date.now;

  return (run) => inConsumerSpan('webhooks', `deliver ${run.job.payload.event}`, run.job.payload.traceparent ?? undefined, () => deliver(run));

  async function deliver(run: JobRun<DeliveryPayload, DeliveryResult>): Promise<DeliveryResult> {
    const p = run.job.payload;
    const policy = DELIVERY_POLICIES[p.kind];
    const earlier = await settleEarlierAttempts(deps.log, p.event_id, now());
    const done = earlier.find((a) => a.state === 'succeeded');
    if (done) return { delivered: true, attempts: earlier.length, response_status: done.response_status };

    const previous = earlier.at(-1);
    let lastEndedMs = previous ? previous.finished_at_ms ?? previous.started_at_ms : null;
    for (let attempt = earlier.length + 1; attempt <= policy.attempts; attempt++) {
      if (lastEndedMs !== null) await waitBackoff(policy, attempt, lastEndedMs, now, run.signal);
      await run.checkpoint();
      const started = now();
      const id = await deps.log.start({ account_id: p.account_id, event_id: p.event_id, event: p.event, url: p.url, attempt, started_at_ms: started });
      if (id === null) {
        // Another run made this attempt: this one lost its lease (the checkpoint ends it), or never had it.
        await run.checkpoint();
        throw new UpstreamError('Another worker is delivering this callback', undefined, 'delivery_raced');
      }
      const outcome = await attemptOnce(deps, run, p, policy, { id, attempt }, started, now);
      if (outcome.succeeded) return { delivered: true, attempts: attempt, response_status: outcome.responseStatus };
      lastEndedMs = now();
    }
    deps.logger.warn({ eventId: p.event_id, accountId: p.account_id, event: p.event, attempts: policy.attempts }, 'callback not acknowledged; giving up');
    deps.metrics?.webhooks.deliveries.inc({ outcome: 'abandoned' });
    throw new UpstreamError(`The callback was not acknowledged after ${policy.attempts} attempts`, undefined, 'callback_undelivered');
  }
}

/** Attempts left `sending` by a run that died count as failed ones. */
async function settleEarlierAttempts(log: DeliveryLog, eventId: string, nowMs: number): Promise<DeliveryAttemptDoc[]> {
  const earlier = await log.of(eventId);
  const open = earlier.filter((a) => a.state === 'sending');
  if (open.length === 0) return earlier;
  for (const a of open) await log.markInterrupted(a._id, nowMs);
  return log.of(eventId);
}

/** Waits until the backoff before `attempt` has passed since the previous attempt ended (or was found dead). */
async function waitBackoff(policy: DeliveryPolicy, attempt: number, lastEndedMs: number, now: () => number, signal: AbortSignal): Promise<void> {
  const gap = policy.backoffMs[attempt - 2] ?? policy.backoffMs.at(-1) ?? 0;
  const remaining = lastEndedMs + gap - now();
  if (remaining > 0) await sleep(remaining, undefined, { signal }).catch(() => undefined);
}

async function attemptOnce(
  deps: DeliveryDeps, run: JobRun<DeliveryPayload, DeliveryResult>, p: DeliveryPayload, policy: DeliveryPolicy,
  { id, attempt }: { id: string; attempt: number }, started: number, now: () => number,
): Promise<AttemptOutcome> {
  const finish = async (outcome: AttemptOutcome, error: string | null) => {
    await deps.log.finish(id, { ...outcome, latencyMs: now() - started, error, atMs: now() });
    deps.metrics?.webhooks.deliveries.inc({ outcome: outcome.succeeded ? 'succeeded' : 'failed' });
    return outcome;
  };
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
  if (p.signed) {
    const secret = await signingSecret(deps, p.account_id);
    if (secret === 'unreadable') {
      // Never sent unsigned when the account expects signatures: this event cannot be delivered.
      await finish({ succeeded: false, responseStatus: null }, 'the signing secret cannot be read (the secrets key changed); rotate the secret');
      throw new UpstreamError('The account signing secret cannot be read', undefined, 'signing_secret_unreadable');
    }
    if (secret !== null) Object.assign(headers, signatureHeaders(secret, p.event_id, Math.floor(now() / 1000), p.body_json));
  }
  try {
    // A client span per attempt; its traceparent stays inside (the receiver is a third party).
    const res = await traceOutgoing('webhooks', 'POST callback', () => ({ 'webhook.event': p.event, 'webhook.attempt': attempt }), {},
      () => deps.client.send(p.url, { method: 'POST', headers, body: p.body_json, timeoutMs: policy.timeoutMs, signal: run.signal, param: 'url' }),
      (r) => r.status);
    const ok = res.status >= 200 && res.status < 300;
    return await finish({ succeeded: ok, responseStatus: res.status }, ok ? null : `HTTP ${res.status}`);
  } catch (err) {
    if (interruptReason(run.signal) !== null) {
      await deps.log.markInterrupted(id, now());
      throw run.signal.reason;
    }
    return finish({ succeeded: false, responseStatus: null }, (err as Error).message);
  }
}

/** The account's secret in the clear, null when it has none, 'unreadable' when it cannot be opened. */
async function signingSecret(deps: DeliveryDeps, accountId: string): Promise<string | null | 'unreadable'> {
  const settings = await deps.settings.get(accountId);
  if (!settings?.sealed_secret) return null;
  return deps.secrets.open(settings.sealed_secret) ?? 'unreadable';
}
