import type { InferenceClient } from '@gw/inference-client';
import { errorEnvelope, toGatewayError, type GatewayError, type Identity } from '@gw/platform';
import { outputLineId } from './batch-lines';

export type ChatCaller = Pick<InferenceClient, 'createChatCompletion'>;

export interface LineOutcome {
  state: 'succeeded' | 'failed';
  /** The output or error file line (API-NOTES: output line). */
  output: object;
}

export interface LineCallOptions {
  identity: Identity;
  traceId: string;
  deadlineMs: number;
  retryMs: number;
  /** Aborted when the batch run stops (lease lost, shutdown): the call in flight and any waiting retry end with it. */
  signal: AbortSignal;
}

/**
 * Whether a call failed before inference could answer it (inference down or restarting, or the same request
 * id still running elsewhere): then it is sent again, with the same request id, instead of recorded as failed.
 */
const notAnswered = (err: GatewayError) => err.status === 503 || err.code === 'request_in_progress';

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  if (signal.aborted) return reject(signal.reason);
  const timer = setTimeout(() => { signal.removeEventListener('abort', stop); resolve(); }, ms);
  const stop = () => { clearTimeout(timer); reject(signal.reason); };
  signal.addEventListener('abort', stop, { once: true });
});

/**
 * One line through the inference gRPC API under the line's own request id. A request id that inference
 * already answered returns the recorded answer (no second provider call, no second charge), so sending a
 * line again after a crash is safe. Errors inference answered become the line's error line.
 */
export async function callLine(inference: ChatCaller, line: { custom_id: string; request_id: string }, body: object, opts: LineCallOptions): Promise<LineOutcome> {
  const id = outputLineId(line.request_id);
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await inference.createChatCompletion(body, {
        actingFor: opts.identity, requestId: line.request_id, traceId: opts.traceId, deadlineMs: opts.deadlineMs, signal: opts.signal,
      });
      return {
        state: 'succeeded',
        output: { id, custom_id: line.custom_id, response: { status_code: 200, request_id: result.requestId, body: result.completion }, error: null },
      };
    } catch (err) {
      // Stopped from here (shutdown, lease lost): not an answer. The next run sends the same request id.
      if (opts.signal.aborted) throw opts.signal.reason;
      const e = toGatewayError(err);
      if (notAnswered(e)) {
        await sleep(Math.min(opts.retryMs * 2 ** Math.min(attempt, 4), 10_000), opts.signal);
        continue;
      }
      return {
        state: 'failed',
        output: {
          id, custom_id: line.custom_id,
          response: { status_code: e.status, request_id: line.request_id, body: errorEnvelope(e, opts.traceId) },
          error: { code: e.code, message: e.message },
        },
      };
    }
  }
}
