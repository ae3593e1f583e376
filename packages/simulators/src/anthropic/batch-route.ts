import type * as http from 'node:http';
import { SNAPSHOT_SUFFIX } from '../http-kit';
import { asksForBrokenResult, batchModeOf, brokenResultLine, lineErrorStatus, linesRunBeforeExpiry, type BatchMode } from '../batch-knobs';
import { anthropicErrorBody, messageBody, simulatedErrorBody } from './anthropic-wire';
import { simulateMessage, type MessagesBody } from './simulated-message';

/**
 * Anthropic's message batches API: `POST /v1/messages/batches`, `GET /v1/messages/batches`,
 * `GET /v1/messages/batches/{id}`, `POST /v1/messages/batches/{id}/cancel` and the JSONL results at
 * `GET /v1/messages/batches/{id}/results`.
 *
 * A batch moves one step per poll, so tests decide when it ends: created `in_progress`, still so at the first
 * poll; the next one runs its lines and ends it (`ended`, with `results_url`). Cancel makes it
 * `canceling`, and the next poll ends it with every line not yet run `canceled`. Knobs (see batch-knobs.ts):
 * the model `sim-batch-expire` runs the first half of the lines and ends with the rest `expired`; a line whose
 * last user message starts with `sim-error-<status>` is `errored` with that status's error.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

type Result = { type: 'succeeded'; message: object } | { type: 'errored'; error: object } | { type: 'canceled' } | { type: 'expired' };

interface SimMessageBatch {
  id: string;
  status: 'in_progress' | 'canceling' | 'ended';
  mode: BatchMode;
  requests: Array<{ custom_id: string; params: MessagesBody }>;
  /** Results lines: objects, or the text of a line cut short (`sim-broken-result`). */
  results: Array<{ custom_id: string; result: Result } | string>;
  polls: number;
  createdAt: Date;
  endedAt: Date | null;
  cancelInitiatedAt: Date | null;
}

export type SendAnthropicJson = (res: http.ServerResponse, status: number, body: unknown) => void;

export function createAnthropicBatchRoutes(send: SendAnthropicJson) {
  const batches = new Map<string, SimMessageBatch>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}${(++counter).toString(36).padStart(12, '0')}`;
  const invalid = (res: http.ServerResponse, message: string) => send(res, 400, anthropicErrorBody('invalid_request_error', message, nextId('req_sim')));

  function batchObject(b: SimMessageBatch, baseUrl: string) {
    // A line cut short counts as succeeded: the provider ran it, only its line of the file is damaged.
    const count = (type: Result['type']) => b.results.filter((r) => (typeof r === 'string' ? 'succeeded' : r.result.type) === type).length;
    return {
      id: b.id,
      type: 'message_batch',
      processing_status: b.status,
      request_counts: {
        processing: b.status === 'ended' ? 0 : b.requests.length - b.results.length,
        succeeded: count('succeeded'),
        errored: count('errored'),
        canceled: count('canceled'),
        expired: count('expired'),
      },
      ended_at: b.endedAt?.toISOString() ?? null,
      created_at: b.createdAt.toISOString(),
      expires_at: new Date(b.createdAt.getTime() + DAY_MS).toISOString(),
      archived_at: null,
      cancel_initiated_at: b.cancelInitiatedAt?.toISOString() ?? null,
      results_url: b.status === 'ended' ? `${baseUrl}/v1/messages/batches/${b.id}/results` : null,
    };
  }

  function create(res: http.ServerResponse, raw: string, baseUrl: string): void {
    let body: { requests?: unknown };
    try {
      body = JSON.parse(raw) as { requests?: unknown };
    } catch {
      return invalid(res, 'There was an issue with your request body: the body is not valid JSON.');
    }
    if (!Array.isArray(body?.requests) || body.requests.length === 0) return invalid(res, 'requests: at least one request is required');
    const seen = new Set<string>();
    for (const [i, r] of (body.requests as Array<{ custom_id?: unknown; params?: Partial<MessagesBody> }>).entries()) {
      if (typeof r?.custom_id !== 'string' || !CUSTOM_ID.test(r.custom_id)) return invalid(res, `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      if (seen.has(r.custom_id)) return invalid(res, `requests: custom_id "${r.custom_id}" is not unique`);
      seen.add(r.custom_id);
      const p = r.params;
      if (typeof p?.model !== 'string' || !Array.isArray(p.messages) || p.messages.length === 0 || !Number.isInteger(p.max_tokens) || (p.max_tokens as number) < 1) {
        return invalid(res, `requests.${i}.params: model, messages and max_tokens are required`);
      }
    }
    const requests = body.requests as SimMessageBatch['requests'];
    const batch: SimMessageBatch = {
      id: nextId('msgbatch_sim'), status: 'in_progress', mode: batchModeOf(requests[0].params.model), requests, results: [], polls: 0,
      createdAt: new Date(), endedAt: null, cancelInitiatedAt: null,
    };
    batches.set(batch.id, batch);
    send(res, 200, batchObject(batch, baseUrl));
  }

  function run(batch: SimMessageBatch, index: number): void {
    const { custom_id, params } = batch.requests[index];
    const status = lineErrorStatus(params.messages);
    if (status !== undefined) {
      const { error } = simulatedErrorBody(status, params.model, nextId('req_sim'));
      batch.results.push({ custom_id, result: { type: 'errored', error: { type: 'error', error } } });
      return;
    }
    if (asksForBrokenResult(params.messages)) {
      batch.results.push(brokenResultLine(custom_id));
      return;
    }
    const message = simulateMessage(params, { toolUseId: nextId('toolu_sim') });
    batch.results.push({ custom_id, result: { type: 'succeeded', message: messageBody({ id: nextId('msg_sim'), model: params.model + SNAPSHOT_SUFFIX }, message) } });
  }

  function end(batch: SimMessageBatch, unrun: 'canceled' | 'expired'): void {
    for (let i = batch.results.length; i < batch.requests.length; i++) batch.results.push({ custom_id: batch.requests[i].custom_id, result: { type: unrun } });
    batch.status = 'ended';
    batch.endedAt = new Date();
  }

  /** One step of the batch's life per poll (see the header). */
  function advance(batch: SimMessageBatch): void {
    if (batch.status === 'ended') return;
    if (batch.status === 'canceling') return end(batch, 'canceled');
    batch.polls++;
    if (batch.polls === 1) return;
    const runs = batch.mode === 'expire' ? linesRunBeforeExpiry(batch.requests.length) : batch.requests.length;
    for (let i = 0; i < runs; i++) run(batch, i);
    end(batch, 'expired');
  }

  function results(res: http.ServerResponse, batch: SimMessageBatch): void {
    if (batch.status !== 'ended') return invalid(res, `Message batch ${batch.id} has not yet ended: its results are not available.`);
    const text = batch.results.map((r) => `${typeof r === 'string' ? r : JSON.stringify(r)}\n`).join('');
    res.writeHead(200, { 'content-type': 'application/binary', 'content-length': Buffer.byteLength(text), 'request-id': nextId('req_sim') });
    res.end(text);
  }

  /** Answers a `/v1/messages/batches...` request whose body (if any) was read into `raw`. */
  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string, raw: string): void {
    const baseUrl = `http://${req.headers.host ?? '127.0.0.1'}`;
    const parts = path.split('/').slice(4); // [id?, action?]
    if (parts.length === 0 && req.method === 'POST') return create(res, raw, baseUrl);
    if (parts.length === 0 && req.method === 'GET') {
      const data = [...batches.values()].reverse().map((b) => batchObject(b, baseUrl));
      return send(res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
    }
    const batch = batches.get(parts[0]);
    if (!batch) return send(res, 404, anthropicErrorBody('not_found_error', `Message batch ${parts[0]} not found`, nextId('req_sim')));
    if (parts.length === 1 && req.method === 'GET') {
      advance(batch);
      return send(res, 200, batchObject(batch, baseUrl));
    }
    if (parts[1] === 'cancel' && req.method === 'POST') {
      if (batch.status === 'in_progress') {
        batch.status = 'canceling';
        batch.cancelInitiatedAt = new Date();
      }
      return send(res, 200, batchObject(batch, baseUrl));
    }
    if (parts[1] === 'results' && req.method === 'GET') return results(res, batch);
    send(res, 404, anthropicErrorBody('not_found_error', 'Not Found', nextId('req_sim')));
  }

  return { route };
}

export function isMessageBatchesPath(path: string): boolean {
  return path === '/v1/messages/batches' || path.startsWith('/v1/messages/batches/');
}
