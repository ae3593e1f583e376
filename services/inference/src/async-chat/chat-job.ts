import type { Identity } from '@gw/platform';
import type { ChatCompletion, Usage } from '@gw/provider-spec';
import type { Doc } from '@gw/store';

export const CHAT_JOBS_COLLECTION = 'chat_jobs';

export type ChatJobStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'expired';

const TERMINAL: ReadonlySet<ChatJobStatus> = new Set(['completed', 'failed', 'cancelled', 'expired']);
export const isTerminal = (status: ChatJobStatus) => TERMINAL.has(status);

/** A durable async chat job. Times are epoch milliseconds here; the public object shows Unix seconds. */
export interface ChatJobDoc extends Doc {
  status: ChatJobStatus;
  /** Public model name. */
  model: string;
  /** `br-<UUIDv4>` made at submit: every run of the job bills under it, so billing counts it once. */
  request_id: string;
  qos: 'completion';
  account_id: string;
  /** The caller's key as the edge vouched for it at submit; the worker pre-authorizes and bills with it. */
  identity: Identity;
  trace_id: string;
  /**
   * The validated chat body as JSON text: a body may carry keys the store refuses as field names
   * (`$schema`, `$ref` inside a JSON schema), so it is never stored as a nested document.
   */
  request_json: string;
  created_at_ms: number;
  expires_at_ms: number;
  in_progress_at_ms?: number;
  completed_at_ms?: number;
  failed_at_ms?: number;
  cancelled_at_ms?: number;
  expired_at_ms?: number;
  cancel_requested_at_ms?: number;
  /** The worker holding the lease; only it may write the outcome. */
  worker_id: string | null;
  lease_until_ms: number;
  attempts: number;
  /** The chat completion object as JSON text, for the same reason as `request_json`. */
  completion_json?: string;
  error?: { code: string; message: string };
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
    model: doc.model,
    request_id: doc.request_id,
    qos: doc.qos,
    created_at: seconds(doc.created_at_ms),
    expires_at: seconds(doc.expires_at_ms),
  };
  for (const [from, to] of OPTIONAL_TIMES) {
    const ms = doc[from];
    if (typeof ms === 'number') job[to] = seconds(ms);
  }
  if (doc.status === 'completed' && doc.completion_json) {
    job.completion = JSON.parse(doc.completion_json) as ChatCompletion;
    job.usage = job.completion.usage;
  }
  if (doc.status === 'failed' && doc.error) job.error = { code: doc.error.code, message: doc.error.message };
  return job;
}
