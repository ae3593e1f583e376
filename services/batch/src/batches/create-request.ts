import { BATCH_EXECUTION_PREFERENCES, type BatchExecutionPreference } from '@gw/catalog';
import { InputError } from '@gw/platform';

/** The one endpoint and window batches offer (spec: Batch endpoints). */
export const BATCH_ENDPOINT = '/v1/chat/completions';
export const COMPLETION_WINDOW = '24h';
const METADATA_MAX_KEYS = 16;
const METADATA_MAX_KEY = 64;
const METADATA_MAX_VALUE = 512;

export interface CreateBatchRequest {
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  execution: BatchExecutionPreference;
  callbackUrl: string | null;
  metadata: Record<string, string> | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function check(ok: boolean, param: string, message: string): void {
  if (!ok) throw new InputError(message, param);
}

/** The body of `POST /v1/batches`, every problem a 400 naming its field. */
export function parseCreateBatch(body: unknown): CreateBatchRequest {
  check(isObject(body), 'body', 'The body must be a JSON object');
  const b = body as Record<string, unknown>;
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
    metadata: parseMetadata(b.metadata),
  };
}

function parseMetadata(metadata: unknown): Record<string, string> | null {
  if (metadata === undefined || metadata === null) return null;
  check(isObject(metadata), 'metadata', 'metadata must be an object of string values');
  const entries = Object.entries(metadata as Record<string, unknown>);
  check(entries.length <= METADATA_MAX_KEYS, 'metadata', `metadata may have at most ${METADATA_MAX_KEYS} keys`);
  for (const [key, value] of entries) {
    check(key.length > 0 && key.length <= METADATA_MAX_KEY, 'metadata', `metadata keys must have 1 to ${METADATA_MAX_KEY} characters`);
    check(typeof value === 'string' && value.length <= METADATA_MAX_VALUE, `metadata.${key}`, `metadata values must be strings of at most ${METADATA_MAX_VALUE} characters`);
  }
  return metadata as Record<string, string>;
}
