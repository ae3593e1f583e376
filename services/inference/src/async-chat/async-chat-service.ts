import { currentTraceparent, InputError, NotFoundError, newId, newRequestId, type Identity } from '@gw/platform';
import type { CatalogModel } from '@gw/catalog';
import type { ChatCompletionRequest } from '@gw/provider-spec';
import { isTerminal } from '@gw/jobs';
import { toJobObject, type ChatJobDoc, type ChatJobObject, type ChatJobStore } from './chat-job';

export interface AsyncChatDeps {
  jobs: ChatJobStore;
  /** Validates a chat body against the catalogue exactly as synchronous chat does, and holds its spend. */
  chat: {
    prepare(body: unknown): { req: ChatCompletionRequest; model: CatalogModel };
    reserve(id: Identity, requestId: string, prepared: { req: ChatCompletionRequest; model: CatalogModel }, traceId: string): Promise<void>;
    release(id: Identity, requestId: string, traceId: string): void;
  };
  workers: { wake(): void; cancelLocal(jobId: string): void };
  expiresAfterMs: number;
  /** How long a cancel of a running job waits for its worker to stop before answering. */
  cancelWaitMs: number;
  now?: () => number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Async chat jobs: submit (validate, pre-authorize, queue), poll, cancel; workers do the rest. */
export class AsyncChatService {
  private readonly now: () => number;

  constructor(private readonly deps: AsyncChatDeps) {
    this.now = deps.now ?? Date.now;
  }

  async submit(body: unknown, identity: Identity, traceId: string): Promise<ChatJobObject> {
    if (isObject(body)) {
      if (body.stream === true) throw new InputError('Async chat jobs are not streamed: omit stream or set it to false', 'stream', 'invalid_request');
      if (body.callback_url !== undefined) {
        throw new InputError('callback_url is not supported for async chat: poll GET /v1/async/chat/completions/{job_id}', 'callback_url', 'unsupported_parameter');
      }
    }
    const { req, model } = this.deps.chat.prepare(body);
    const requestId = newRequestId();
    // Spend hold under the job's request id: held while queued; the worker's run reserves the same id again.
    await this.deps.chat.reserve(identity, requestId, { req, model }, traceId);
    const { job } = await this.deps.jobs.enqueue({
      id: newId('chatjob_'),
      ownerId: identity.accountId,
      expiresAtMs: this.now() + this.deps.expiresAfterMs,
      payload: { model: model.id, request_id: requestId, qos: 'completion', identity, trace_id: traceId, ...traceparentField(), request_json: JSON.stringify(req) },
    });
    this.deps.workers.wake();
    return toJobObject(job);
  }

  async get(jobId: string, identity: Identity): Promise<ChatJobObject> {
    return toJobObject(await this.owned(jobId, identity));
  }

  async cancel(jobId: string, identity: Identity): Promise<ChatJobObject> {
    const job = await this.deps.jobs.cancel(jobId, identity.accountId);
    if (!job) throw notFound(jobId);
    // A job cancelled before any run will not spend: drop its hold (a run's own failure releases it otherwise).
    if (job.status === 'cancelled' && job.attempts === 0) this.deps.chat.release(identity, job.payload.request_id, job.payload.trace_id);
    if (job.status !== 'in_progress') return toJobObject(job);
    this.deps.workers.cancelLocal(jobId);
    return toJobObject(await this.waitForStop(job));
  }

  /** A running job stops at its worker; answer with the outcome when it comes quickly, else as it is now. */
  private async waitForStop(job: ChatJobDoc): Promise<ChatJobDoc> {
    const deadline = Date.now() + this.deps.cancelWaitMs;
    let current = job;
    while (!isTerminal(current.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      current = (await this.deps.jobs.get(job._id)) ?? current;
    }
    return current;
  }

  private async owned(jobId: string, identity: Identity): Promise<ChatJobDoc> {
    const job = await this.deps.jobs.getForOwner(jobId, identity.accountId);
    if (!job) throw notFound(jobId);
    return job;
  }
}

// Another account's job is indistinguishable from a missing one.
const notFound = (jobId: string) => new NotFoundError(`Async chat job '${jobId}' not found`, 'job_id', 'job_not_found');

const traceparentField = (): { traceparent?: string } => {
  const traceparent = currentTraceparent();
  return traceparent ? { traceparent } : {};
};
