import type { ChatTarget } from '@gw/provider-spec';
import type { UpstreamAnswer } from './arrived-bytes-request';
import { Deadline } from './deadline';
import { mapTransportError } from './upstream-errors';

/**
 * Runs one non-streaming upstream call (send and read the answer) under the target's deadline. Failures come
 * out as typed errors; the deadline is released however the call ends.
 */
export async function callUpstream<T>(target: ChatTarget, signal: AbortSignal | undefined, call: (deadline: Deadline) => Promise<T>): Promise<T> {
  const deadline = new Deadline(target.timeoutMs, signal);
  try {
    return await call(deadline);
  } catch (err) {
    throw mapTransportError(err, deadline);
  } finally {
    deadline.dispose();
  }
}

/**
 * Sends a streaming call under the target's deadline and resolves once the upstream answered with 2xx headers,
 * so a failure before the first byte is a thrown typed error. The deadline stays armed: hand it on with the
 * answer to translateEventStream, which releases it.
 */
export async function openUpstreamStream(
  target: ChatTarget,
  signal: AbortSignal | undefined,
  send: (deadline: Deadline) => Promise<UpstreamAnswer>,
): Promise<{ res: UpstreamAnswer; deadline: Deadline }> {
  const deadline = new Deadline(target.timeoutMs, signal);
  try {
    return { res: await send(deadline), deadline };
  } catch (err) {
    deadline.dispose();
    throw mapTransportError(err, deadline);
  }
}
