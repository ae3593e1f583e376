import { interruptReason, type JobHandler } from '@gw/jobs';
import { inConsumerSpan, InputError, type Identity, type Logger } from '@gw/platform';
import type { ChatCompletion } from '@gw/provider-spec';
import type { ChatJobPayload, ChatJobResult } from './chat-job';

/** The part of ChatService a job needs: one billed, abortable, non-streaming completion. */
export interface ChatCompleter {
  complete(body: unknown, id: Identity, traceId: string, opts: { requestId: string; signal: AbortSignal }): Promise<{ requestId: string; completion: ChatCompletion }>;
}

export interface ChatJobHandlerDeps {
  chat: ChatCompleter;
  /** Resolves once every usage event recorded so far is durable (on the bus or in the outbox). */
  flushUsage: () => Promise<void>;
  logger: Logger;
  /** Wait between flush attempts while the bus and the outbox are unreachable. */
  flushRetryMs: number;
}

/**
 * Runs one async chat job: the chat completion under the job's request_id, abortable by a cancel. Order
 * matters for money: the completion's usage event is made durable before the result is returned (and the
 * job says `completed`). A crash in between re-runs the job under the same request_id, and billing drops
 * the duplicate, so the job is billed exactly once.
 */
export function chatJobHandler(deps: ChatJobHandlerDeps): JobHandler<ChatJobPayload, ChatJobResult> {
  return async ({ job, workerId, signal }) => {
    const { payload } = job;
    const log = deps.logger.child({ jobId: job._id, requestId: payload.request_id, workerId, attempt: job.attempts });
    const { completion } = await inConsumerSpan('inference', 'async chat job', payload.traceparent,
      () => deps.chat.complete(parseBody(payload.request_json), payload.identity, payload.trace_id, { requestId: payload.request_id, signal }));
    await flushUntilDurable(deps, signal, log);
    return { completion_json: JSON.stringify(completion) };
  };
}

/**
 * Retries the flush while the job is still ours. A cancel arriving now changes nothing (the provider has
 * answered and billed); a lost lease or shutdown stops here, and the re-run bills under the same request_id.
 */
async function flushUntilDurable(deps: ChatJobHandlerDeps, signal: AbortSignal, log: Logger): Promise<void> {
  for (;;) {
    try {
      await deps.flushUsage();
      return;
    } catch (err) {
      const reason = interruptReason(signal);
      if (reason === 'lease_lost' || reason === 'shutdown') throw signal.reason;
      log.warn({ err }, 'usage event not yet durable; retrying before the job is completed');
      await new Promise((r) => setTimeout(r, deps.flushRetryMs));
    }
  }
}

/** The body was validated and serialized at submit; unreadable text fails the job instead of the worker. */
function parseBody(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw new InputError('The stored job request is not readable', 'body', 'invalid_request');
  }
}
