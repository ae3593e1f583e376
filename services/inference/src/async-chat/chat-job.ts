import type { Identity } from '@gw/platform';
import type { ChatCompletion, Usage } from '@gw/provider-spec';
import { JobStore, type JobDoc, type JobStatus } from '@gw/jobs';
import type { Store } from '@gw/store';

/** The kind async chat jobs are enqueued and claimed as in the shared jobs collection. */
export const CHAT_JOB_KIND = 'chat.completion';

export type ChatJobStatus = JobStatus;

/** What a worker needs to run the job; the job's owner is the caller's account. */
export interface ChatJobPayload {
  /** Public model name. */
  model: string;
  /** `br-<UUIDv4>` made at submit: every run of the job bills under it, so billing counts it once. */
  request_id: string;
  qos: 'completion';
  /** The caller's key as the edge vouched for it at submit; the worker pre-authorizes and bills with it. */
  identity: Identity;
  trace_id: string;
  /** The submitting request's span, which every run of the job continues (absent when tracing was off). */
  traceparent?: string;
  /**
   * The validated chat body as JSON text: a body may carry keys the store refuses as field names
   * (`$schema`, `$ref` inside a JSON schema), so it is never stored as a nested document.
   */
  request_json: string;
}

export interface ChatJobResult {
  /** The chat completion object as JSON text, for the same reason as `request_json`. */
  completion_json: string;
}

/** A durable async chat job. Times are epoch milliseconds here; the public object shows Unix seconds. */
export type ChatJobDoc = JobDoc<ChatJobPayload, ChatJobResult>;
export type ChatJobStore = JobStore<ChatJobPayload, ChatJobResult>;

export function chatJobStore(store: Store, clock?: () => number): ChatJobStore {
  return new JobStore<ChatJobPayload, ChatJobResult>({ store, kind: CHAT_JOB_KIND, clock });
}

/** The public `chat.completion.job` object. */
export interface ChatJobObject {
  id: string;
  object: 'chat.completion.job';
  status: ChatJobStatus;
  model: string;
  request_id: string;
  qos: 'completion';
  created_at: number;
  expires_at: number;
  in_progress_at?: number;
  completed_at?: number;
  failed_at?: number;
  cancelled_at?: number;
  expired_at?: number;
  cancel_requested_at?: number;
  completion?: ChatCompletion;
  usage?: Usage;
  error?: { code: string; message: string };
}

const seconds = (ms: number) => Math.floor(ms / 1000);

const OPTIONAL_TIMES = [
  ['in_progress_at_ms', 'in_progress_at'],
  ['completed_at_ms', 'completed_at'],
  ['failed_at_ms', 'failed_at'],
  ['cancelled_at_ms', 'cancelled_at'],
  ['expired_at_ms', 'expired_at'],
  ['cancel_requested_at_ms', 'cancel_requested_at'],
] as const;

export function toJobObject(doc: ChatJobDoc): ChatJobObject {
  const job: ChatJobObject = {
    id: doc._id,
    object: 'chat.completion.job',
    status: doc.status,
    model: doc.payload.model,
    request_id: doc.payload.request_id,
    qos: doc.payload.qos,
    created_at: seconds(doc.created_at_ms),
    expires_at: seconds(doc.expires_at_ms),
  };
  for (const [from, to] of OPTIONAL_TIMES) {
    const ms = doc[from];
    if (typeof ms === 'number') job[to] = seconds(ms);
  }
  const completion = doc.status === 'completed' ? parseCompletion(doc.result?.completion_json) : null;
  if (completion) {
    job.completion = completion;
    job.usage = completion.usage;
  }
  if (doc.status === 'failed' && doc.error) job.error = { code: doc.error.code, message: doc.error.message };
  return job;
}

/** The stored completion; null when missing or unreadable (the job then shows its status without it). */
function parseCompletion(json: string | undefined): ChatCompletion | null {
  if (!json) return null;
  try {
    return JSON.parse(json) as ChatCompletion;
  } catch {
    return null;
  }
}
