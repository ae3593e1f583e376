import type { Identity } from '@gw/platform';
import type { Collection, Doc, Store } from '@gw/store';
import { seconds } from '../files/file-records';

export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';
export type TerminalBatchStatus = 'completed' | 'failed' | 'expired' | 'cancelled';
const TERMINAL: ReadonlySet<BatchStatus> = new Set<BatchStatus>(['completed', 'failed', 'expired', 'cancelled']);
export const isTerminalBatch = (status: BatchStatus): status is TerminalBatchStatus => TERMINAL.has(status);
/** Statuses a batch may still be cancelled from. */
export const CANCELLABLE: BatchStatus[] = ['validating', 'in_progress', 'finalizing'];

/** Spec: Batch `errors` (when failed), plus the offending lines OpenAI clients read from `data`. */
export interface BatchErrors {
  message: string;
  code: string;
  type: string;
  stage: string;
  upstream_http_status?: number;
  upstream_message?: string;
  object: 'list';
  data: { code: string; message: string; param: string | null; line: number | null }[];
}

export interface RequestCounts {
  total: number;
  completed: number;
  failed: number;
}

/** List vs charged amounts of the batch's lines, recorded at finalize. */
export interface UsageBilling {
  list_cost: string;
  charged_cost: string;
  list_cost_micros: number;
  charged_cost_micros: number;
  /** Lines billed (answered lines whose charge billing has applied). */
  billed_requests: number;
}

export interface BatchDoc extends Doc {
  account_id: string;
  /** Whom every line is billed to: the key that created the batch. */
  identity: Identity;
  trace_id: string;
  /** The W3C traceparent of the request that created the batch, so its lines continue that trace (absent when tracing is off, and in older batches). */
  traceparent?: string | null;
  status: BatchStatus;
  endpoint: string;
  completion_window: string;
  execution_preference: 'auto' | 'provider' | 'platform';
  execution: 'platform' | 'provider';
  fallback_from_provider: boolean;
  /** The catalogue deployment whose batch API runs a provider batch. */
  deployment_id: string | null;
  /** Provider execution: the upstream batch (a NativeBatchHandle as JSON), once submitted. */
  provider_handle_json: string | null;
  /** Provider execution: the upstream cancel was asked for. */
  provider_cancel_sent: boolean;
  input_file_id: string;
  client_model: string | null;
  output_file_id: string | null;
  error_file_id: string | null;
  request_counts: RequestCounts;
  /** Every input line has its record (and request id): set once, by the first run. */
  lines_prepared: boolean;
  usage_billing: UsageBilling | null;
  /** JSON text: metadata keys are the caller's and may hold characters the store refuses in field names. */
  metadata_json: string | null;
  errors: BatchErrors | null;
  callback_url: string | null;
  /** Set with the terminal status, cleared once the callback event is in the bus (or its outbox). */
  callback_pending: boolean;
  created_at_ms: number;
  in_progress_at_ms: number | null;
  finalizing_at_ms: number | null;
  completed_at_ms: number | null;
  failed_at_ms: number | null;
  expired_at_ms: number | null;
  cancelling_at_ms: number | null;
  cancelled_at_ms: number | null;
  expires_at_ms: number;
}

const sec = (ms: number | null) => (ms === null ? null : seconds(ms));

function metadataOf(doc: BatchDoc): Record<string, string> | null {
  if (doc.metadata_json === null) return null;
  try {
    return JSON.parse(doc.metadata_json) as Record<string, string>;
  } catch {
    return null;
  }
}

/** The spec's Batch object. */
export function toBatchObject(doc: BatchDoc) {
  return {
    id: doc._id,
    object: 'batch' as const,
    endpoint: doc.endpoint,
    status: doc.status,
    execution_preference: doc.execution_preference,
    execution: doc.execution,
    fallback_from_provider: doc.fallback_from_provider,
    input_file_id: doc.input_file_id,
    client_model: doc.client_model,
    output_file_id: doc.output_file_id,
    error_file_id: doc.error_file_id,
    completion_window: doc.completion_window,
    usage_billing: doc.usage_billing,
    request_counts: doc.request_counts,
    created_at: seconds(doc.created_at_ms),
    in_progress_at: sec(doc.in_progress_at_ms),
    finalizing_at: sec(doc.finalizing_at_ms),
    completed_at: sec(doc.completed_at_ms),
    failed_at: sec(doc.failed_at_ms),
    expired_at: sec(doc.expired_at_ms),
    cancelling_at: sec(doc.cancelling_at_ms),
    cancelled_at: sec(doc.cancelled_at_ms),
    expires_at: seconds(doc.expires_at_ms),
    metadata: metadataOf(doc),
    errors: doc.errors,
  };
}

export type BatchObject = ReturnType<typeof toBatchObject>;

/** The fields the spec's Batch endpoints list names for a cancel response. */
export function toCancelObject(doc: BatchDoc) {
  const b = toBatchObject(doc);
  return {
    id: b.id, object: b.object, endpoint: b.endpoint, status: b.status, input_file_id: b.input_file_id, output_file_id: b.output_file_id,
    error_file_id: b.error_file_id, completion_window: b.completion_window, execution: b.execution, usage_billing: b.usage_billing,
    request_counts: b.request_counts, created_at: b.created_at, cancelled_at: b.cancelled_at, expires_at: b.expires_at, metadata: b.metadata,
  };
}

export function batchesCollection(store: Store): Collection<BatchDoc> {
  return store.collection<BatchDoc>('batches');
}

export async function ensureBatchIndexes(batches: Collection<BatchDoc>): Promise<void> {
  await batches.ensureIndex({ fields: { account_id: 1, created_at_ms: -1 } });
  await batches.ensureIndex({ fields: { input_file_id: 1 } });
  await batches.ensureIndex({ fields: { callback_pending: 1 } });
  // Every instance's maintenance looks up the batches still open, oldest first, among all batches ever made.
  await batches.ensureIndex({ fields: { status: 1, created_at_ms: 1 } });
}
