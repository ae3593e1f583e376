/** OpenAI file, batch and batch result line bodies, in the shapes the real API sends. */

export type OpenAIBatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface SimFile {
  id: string;
  bytes: number;
  created_at: number;
  filename: string;
  purpose: 'batch' | 'batch_output';
  content: Buffer;
}

export function fileObject(f: SimFile) {
  return {
    object: 'file',
    id: f.id,
    purpose: f.purpose,
    filename: f.filename,
    bytes: f.bytes,
    created_at: f.created_at,
    expires_at: null,
    status: 'processed',
    status_details: null,
  };
}

export interface SimBatchTimes {
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
}

export interface BatchObjectFields {
  id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: OpenAIBatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  errors: { object: 'list'; data: Array<{ code: string; message: string; param: string | null; line: number | null }> } | null;
  times: SimBatchTimes;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

export function batchObject(b: BatchObjectFields) {
  return {
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    errors: b.errors,
    input_file_id: b.input_file_id,
    completion_window: b.completion_window,
    status: b.status,
    output_file_id: b.output_file_id,
    error_file_id: b.error_file_id,
    ...b.times,
    request_counts: b.request_counts,
    metadata: b.metadata,
  };
}

/** A line answered by the model, in the output file (2xx) or the error file (any other status). */
export function answeredLine(id: string, customId: string, statusCode: number, requestId: string, body: unknown) {
  return { id, custom_id: customId, response: { status_code: statusCode, request_id: requestId, body }, error: null };
}

/** A line that never ran, in the error file. */
export function unrunLine(id: string, customId: string, code: 'batch_expired' | 'batch_cancelled') {
  const message = code === 'batch_expired'
    ? 'This request could not be executed before the completion window expired.'
    : 'This request was not executed because the batch was cancelled.';
  return { id, custom_id: customId, response: null, error: { code, message } };
}
