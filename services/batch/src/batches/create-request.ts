import { BATCH_EXECUTION_PREFERENCES, type BatchExecutionPreference } from '@gw/catalog';
import { InputError, parseKeyValueMetadata, rejectUnknownFields } from '@gw/platform';

/** The one endpoint and window batches offer (spec: Batch endpoints). */
export const BATCH_ENDPOINT = '/v1/chat/completions';
export const COMPLETION_WINDOW = '24h';

export interface CreateBatchRequest {
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  execution: BatchExecutionPreference;
  callbackUrl: string | null;
  metadata: Record<string, string> | null;
}

const CREATE_FIELDS: ReadonlySet<string> = new Set(['input_file_id', 'endpoint', 'completion_window', 'execution', 'callback_url', 'metadata']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function check(ok: boolean, param: string, message: string): void {
  if (!ok) throw new InputError(message, param);
}

/** The body of `POST /v1/batches`, every problem a 400 naming its field. */
export function parseCreateBatch(body: unknown): CreateBatchRequest {
  check(isObject(body), 'body', 'The body must be a JSON object');
  const b = body as Record<string, unknown>;
  rejectUnknownFields(b, CREATE_FIELDS, { output_expires_after: 'output files expire as every file of the gateway does, after FILE_EXPIRES_AFTER_S' });
  check(typeof b.input_file_id === 'string' && b.input_file_id.length > 0 && b.input_file_id.length <= 200, 'input_file_id', 'input_file_id is required: the id of an uploaded file with purpose "batch"');
  check(b.endpoint === BATCH_ENDPOINT, 'endpoint', `endpoint must be "${BATCH_ENDPOINT}"`);
  check(b.completion_window === COMPLETION_WINDOW, 'completion_window', `completion_window must be "${COMPLETION_WINDOW}"`);
  const execution = b.execution ?? 'auto';
  check(BATCH_EXECUTION_PREFERENCES.includes(execution as BatchExecutionPreference), 'execution', `execution must be one of ${BATCH_EXECUTION_PREFERENCES.join(', ')}`);
  const callbackUrl = b.callback_url ?? null;
  check(callbackUrl === null || (typeof callbackUrl === 'string' && callbackUrl.length <= 2048), 'callback_url', 'callback_url must be an https URL');
  return {
    inputFileId: b.input_file_id as string,
    endpoint: BATCH_ENDPOINT,
    completionWindow: COMPLETION_WINDOW,
    execution: execution as BatchExecutionPreference,
    callbackUrl: callbackUrl as string | null,
    metadata: parseKeyValueMetadata(b.metadata),
  };
}
