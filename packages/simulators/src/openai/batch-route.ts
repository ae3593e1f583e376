import type * as http from 'node:http';
import { sendJson, simulatedErrorStatus, SNAPSHOT_SUFFIX } from '../http-kit';
import { asksForBrokenResult, brokenResultLine, lineErrorStatus, parseJsonLines, type BatchMode, batchModeOf, linesRunBeforeExpiry } from '../batch-knobs';
import { answeredLine, batchObject, fileObject, unrunLine, type BatchObjectFields, type SimFile } from './batch-wire';
import { chatCompletionBody, openAIErrorBody, simulatedErrorBody } from './openai-wire';
import { answer } from './simulated-chat';

/**
 * OpenAI's files and batches APIs: `POST /v1/files` (multipart, purpose `batch`), `GET /v1/files/{id}`,
 * `GET /v1/files/{id}/content`, `DELETE /v1/files/{id}`, `POST /v1/batches`, `GET /v1/batches`,
 * `GET /v1/batches/{id}`, `POST /v1/batches/{id}/cancel`.
 *
 * A batch moves one step per poll, so tests decide when it ends: created `validating`, then `in_progress`,
 * then (all lines run) `finalizing`, then `completed`. Cancel makes it `cancelling`, and the next poll
 * `cancelled` with every line not yet run `batch_cancelled`. Knobs: the lines' model `sim-batch-expire` runs
 * only the first half of the lines and ends `expired` (the rest `batch_expired`); `sim-batch-fail` fails at
 * validation; a line whose last user message starts with `sim-error-<status>` is answered with that error.
 */

const DAY_SECONDS = 24 * 60 * 60;

interface SimBatch extends BatchObjectFields {
  mode: BatchMode;
  lines: Array<{ customId: string; body: Record<string, unknown> }>;
  /** Results lines: objects, or the text of a line cut short (`sim-broken-result`). */
  output: Array<object | string>;
  errorsOut: object[];
}

export function createOpenAIBatchRoutes() {
  const files = new Map<string, SimFile>();
  const batches = new Map<string, SimBatch>();
  const byIdempotencyKey = new Map<string, string>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}${(++counter).toString(36).padStart(12, '0')}`;
  const now = () => Math.floor(Date.now() / 1000);

  function addFile(filename: string, purpose: SimFile['purpose'], content: Buffer): SimFile {
    const file: SimFile = { id: nextId('file-sim'), bytes: content.length, created_at: now(), filename, purpose, content };
    files.set(file.id, file);
    return file;
  }

  async function uploadFile(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): Promise<void> {
    let form: FormData;
    try {
      form = await new Request('http://simulator/', { method: 'POST', headers: { 'content-type': String(req.headers['content-type'] ?? '') }, body: raw }).formData();
    } catch {
      return sendJson(res, 400, openAIErrorBody('The request must be multipart/form-data with a file and a purpose.', 'invalid_request_error', null, null));
    }
    const purpose = form.get('purpose');
    const file = form.get('file');
    if (purpose !== 'batch') return sendJson(res, 400, openAIErrorBody(`Invalid value for 'purpose': '${String(purpose)}'.`, 'invalid_request_error', 'purpose', 'invalid_value'));
    if (!(file instanceof File)) return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'file'.", 'invalid_request_error', 'file', 'missing_required_parameter'));
    sendJson(res, 200, fileObject(addFile(file.name || 'upload.jsonl', 'batch', Buffer.from(await file.arrayBuffer()))));
  }

  function createBatch(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, openAIErrorBody('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
    }
    const key = req.headers['idempotency-key'];
    const earlier = typeof key === 'string' ? batches.get(byIdempotencyKey.get(key) ?? '') : undefined;
    if (earlier) return sendJson(res, 200, batchObject(earlier), { 'idempotent-replayed': 'true' });
    const input = files.get(String(body.input_file_id));
    if (!input || input.purpose !== 'batch') return sendJson(res, 400, openAIErrorBody(`No batch input file with id '${String(body.input_file_id)}'.`, 'invalid_request_error', 'input_file_id', 'invalid_value'));
    if (body.endpoint !== '/v1/chat/completions') return sendJson(res, 400, openAIErrorBody(`Invalid value for 'endpoint': '${String(body.endpoint)}'.`, 'invalid_request_error', 'endpoint', 'invalid_value'));
    if (body.completion_window !== '24h') return sendJson(res, 400, openAIErrorBody("Invalid value for 'completion_window': only '24h' is supported.", 'invalid_request_error', 'completion_window', 'invalid_value'));
    const created = now();
    const batch: SimBatch = {
      id: nextId('batch_sim'), endpoint: '/v1/chat/completions', input_file_id: input.id, completion_window: '24h', status: 'validating',
      output_file_id: null, error_file_id: null, errors: null,
      times: { created_at: created, in_progress_at: null, expires_at: created + DAY_SECONDS, finalizing_at: null, completed_at: null, failed_at: null, expired_at: null, cancelling_at: null, cancelled_at: null },
      request_counts: { total: 0, completed: 0, failed: 0 },
      metadata: (body.metadata as Record<string, string> | undefined) ?? null,
      mode: 'normal', lines: [], output: [], errorsOut: [],
    };
    validate(batch, input.content);
    batches.set(batch.id, batch);
    if (typeof key === 'string') byIdempotencyKey.set(key, batch.id);
    sendJson(res, 200, batchObject(batch));
  }

  /** Reads the input file into the batch, or records why the batch will fail at validation. */
  function validate(batch: SimBatch, content: Buffer): void {
    const parsed = parseJsonLines(content);
    const problems: NonNullable<SimBatch['errors']>['data'] = [];
    parsed.forEach((line, i) => {
      const l = line as { custom_id?: unknown; method?: unknown; url?: unknown; body?: { model?: unknown } } | undefined;
      if (!l || typeof l.custom_id !== 'string' || l.method !== 'POST' || l.url !== batch.endpoint || typeof l.body?.model !== 'string') {
        problems.push({ code: 'invalid_request', message: 'Each line needs custom_id, method POST, the batch endpoint as url and a body with a model.', param: null, line: i + 1 });
        return;
      }
      batch.lines.push({ customId: l.custom_id, body: l.body as Record<string, unknown> });
    });
    batch.mode = batchModeOf(batch.lines[0]?.body.model);
    if (batch.mode === 'fail') problems.push({ code: 'invalid_request', message: 'Simulated validation failure.', param: null, line: null });
    if (parsed.length === 0) problems.push({ code: 'empty_file', message: 'The input file is empty.', param: null, line: null });
    batch.request_counts.total = problems.length > 0 ? 0 : batch.lines.length;
    if (problems.length > 0) batch.errors = { object: 'list', data: problems };
  }

  function runLine(batch: SimBatch, index: number): void {
    const { customId, body } = batch.lines[index];
    const id = nextId('batch_req_sim');
    const requestId = nextId('req_sim');
    const model = String(body.model);
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const status = lineErrorStatus(messages) ?? simulatedErrorStatus(model) ?? (messages.length === 0 ? 400 : undefined);
    if (status !== undefined) {
      batch.errorsOut.push(answeredLine(id, customId, status, requestId, simulatedErrorBody(status, model)));
      batch.request_counts.failed++;
      return;
    }
    const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
    const result = answer(messages, { maxTokens, callId: `call_sim${id}`, json: (body.response_format as { type?: string } | undefined)?.type?.startsWith('json') });
    const completion = chatCompletionBody({ id: nextId('chatcmpl-sim'), created: now(), model: model + SNAPSHOT_SUFFIX }, result);
    batch.output.push(asksForBrokenResult(messages) ? brokenResultLine(customId) : answeredLine(id, customId, 200, requestId, completion));
    batch.request_counts.completed++;
  }

  function settleUnrun(batch: SimBatch, from: number, code: 'batch_expired' | 'batch_cancelled'): void {
    for (let i = from; i < batch.lines.length; i++) {
      batch.errorsOut.push(unrunLine(nextId('batch_req_sim'), batch.lines[i].customId, code));
      batch.request_counts.failed++;
    }
  }

  function writeFiles(batch: SimBatch): void {
    const jsonl = (lines: Array<object | string>) => Buffer.from(lines.map((l) => `${typeof l === 'string' ? l : JSON.stringify(l)}\n`).join(''));
    if (batch.output.length > 0) batch.output_file_id = addFile('batch_output.jsonl', 'batch_output', jsonl(batch.output)).id;
    if (batch.errorsOut.length > 0) batch.error_file_id = addFile('batch_errors.jsonl', 'batch_output', jsonl(batch.errorsOut)).id;
  }

  /** One step of the batch's life per poll (see the header). */
  function advance(batch: SimBatch): void {
    const t = batch.times;
    switch (batch.status) {
      case 'validating':
        if (batch.errors) {
          batch.status = 'failed';
          t.failed_at = now();
        } else {
          batch.status = 'in_progress';
          t.in_progress_at = now();
        }
        return;
      case 'in_progress': {
        const runs = batch.mode === 'expire' ? Math.min(batch.lines.length, linesRunBeforeExpiry(batch.lines.length)) : batch.lines.length;
        for (let i = 0; i < runs; i++) runLine(batch, i);
        if (batch.mode === 'expire') {
          settleUnrun(batch, runs, 'batch_expired');
          writeFiles(batch);
          batch.status = 'expired';
          t.expired_at = now();
          return;
        }
        batch.status = 'finalizing';
        t.finalizing_at = now();
        return;
      }
      case 'finalizing':
        writeFiles(batch);
        batch.status = 'completed';
        t.completed_at = now();
        return;
      case 'cancelling':
        // Lines already run (a cancel during finalizing) keep their answers.
        settleUnrun(batch, batch.output.length + batch.errorsOut.length, 'batch_cancelled');
        writeFiles(batch);
        batch.status = 'cancelled';
        t.cancelled_at = now();
        return;
      default:
        return;
    }
  }

  function cancel(res: http.ServerResponse, batch: SimBatch): void {
    if (!['validating', 'in_progress', 'finalizing'].includes(batch.status)) {
      return sendJson(res, 409, openAIErrorBody(`Cannot cancel a batch with status '${batch.status}'.`, 'invalid_request_error', null, null));
    }
    batch.status = 'cancelling';
    batch.times.cancelling_at = now();
    sendJson(res, 200, batchObject(batch));
  }

  /** Answers a `/v1/files...` or `/v1/batches...` request whose body (if any) was read into `raw`. */
  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string, raw: Buffer): void {
    const parts = path.split('/').slice(2); // ['files' | 'batches', id?, action?]
    const notFound = (what: string) => sendJson(res, 404, openAIErrorBody(`No such ${what}: '${parts[1]}'`, 'invalid_request_error', 'id', null));
    if (parts[0] === 'files') {
      if (parts.length === 1 && req.method === 'POST') return void uploadFile(req, res, raw);
      const file = files.get(parts[1] ?? '');
      if (!file) return notFound('File');
      if (parts.length === 2 && req.method === 'GET') return sendJson(res, 200, fileObject(file));
      if (parts.length === 2 && req.method === 'DELETE') {
        files.delete(file.id);
        return sendJson(res, 200, { id: file.id, object: 'file', deleted: true });
      }
      if (parts[2] === 'content' && req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.content.length });
        return void res.end(file.content);
      }
    } else {
      if (parts.length === 1 && req.method === 'POST') return createBatch(req, res, raw);
      if (parts.length === 1 && req.method === 'GET') {
        const data = [...batches.values()].reverse().map(batchObject);
        return sendJson(res, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });
      }
      const batch = batches.get(parts[1] ?? '');
      if (!batch) return notFound('batch');
      if (parts.length === 2 && req.method === 'GET') {
        advance(batch);
        return sendJson(res, 200, batchObject(batch));
      }
      if (parts[2] === 'cancel' && req.method === 'POST') return cancel(res, batch);
    }
    sendJson(res, 404, openAIErrorBody(`Invalid URL (${req.method} ${path})`, 'invalid_request_error', null, null));
  }

  return { route };
}

/** The paths the batch routes answer. */
export function isBatchPath(path: string): boolean {
  return path === '/v1/files' || path.startsWith('/v1/files/') || path === '/v1/batches' || path.startsWith('/v1/batches/');
}
