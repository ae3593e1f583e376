import { arr, cursorList, dataOf, int, obj, oneOf, ref, str, type Schema } from './schema-helpers';

/** Builders for operations: bodies, answers, parameters and who may call. */
export type Operation = Record<string, unknown>;

export const json = (schema: Schema) => ({ 'application/json': { schema } });
export const answer = (schema: Schema, description = 'OK') => ({ description, content: json(schema) });
export const sse = (description: string) => ({ 'text/event-stream': { schema: { type: 'string', description } } });

/** Errors every operation may answer: the spec's envelope (or plain JSON on the key endpoints). */
const errorAnswers = (plain: boolean) => {
  const body = plain ? ref('PlainError') : ref('ErrorEnvelope');
  return {
    '4XX': answer(body, 'Refused: bad input (naming the param), no or bad key, unknown id, spend or rate limit'),
    '5XX': answer(body, 'Failed: upstream or gateway error; or 503 `server_busy` with Retry-After when the gateway holds as many request bodies as it may'),
  };
};

export const pathParam = (name: string, description?: string) => ({ name, in: 'path', required: true, schema: { type: 'string' }, ...(description ? { description } : {}) });
export const queryParam = (name: string, schema: Schema, description?: string) => ({ name, in: 'query', required: false, schema, ...(description ? { description } : {}) });
/** Stored media answer one byte range (a browser's video element asks for them to play and seek). */
export const rangeParam = { name: 'Range', in: 'header', required: false, schema: { type: 'string' }, description: 'one byte range (bytes=start-end, start- or -suffix) is answered with a 206; several, or an unreadable header, get the whole' };
export const rangeResponses = (error: Schema) => ({
  206: { description: 'The byte range asked for, with Content-Range' },
  416: answer(error, 'A range that starts past the end (Content-Range: bytes */size)'),
});
const cursorParams = [queryParam('after', str(), 'cursor: the last id of the previous page'), queryParam('limit', int(undefined, { minimum: 1, maximum: 100 }))];
/** The lists of the store's list pages (files, batches, images) also take a sort order. */
export const orderedCursorParams = [...cursorParams, queryParam('order', oneOf(['desc', 'asc']), 'desc: newest first (the default); asc: oldest first')];

export interface OperationSpec {
  summary: string;
  tags: string[];
  /** `key` (default): Bearer API key; `optional`: key accepted, not required; `none`: no key; `key-or-x-api-key`. */
  auth?: 'key' | 'optional' | 'none' | 'key-or-x-api-key';
  params?: unknown[];
  body?: Record<string, unknown>;
  responses: Record<string, unknown>;
  /** The key endpoints answer errors as plain JSON instead of the envelope. */
  plainErrors?: boolean;
  description?: string;
}

const SECURITY = {
  key: [{ bearer: [] }],
  optional: [{}, { bearer: [] }],
  none: [],
  'key-or-x-api-key': [{ bearer: [] }, { apiKey: [] }],
};

/** Every answer carries the trace id; a call billed or lookup-able also its request id. */
const withHeaders = (responses: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(responses).map(([status, r]) => [status, {
  ...(r as object),
  headers: { 'x-trace-id': { $ref: '#/components/headers/TraceId' }, 'x-request-id': { $ref: '#/components/headers/RequestId' } },
}]));

export function op(spec: OperationSpec): Operation {
  return {
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: spec.tags,
    security: SECURITY[spec.auth ?? 'key'],
    ...(spec.params ? { parameters: spec.params } : {}),
    ...(spec.body ? { requestBody: { required: true, content: spec.body } } : {}),
    responses: withHeaders({ ...spec.responses, ...(spec.auth === 'none' ? {} : errorAnswers(spec.plainErrors ?? false)) }),
  };
}

/** A 501 for the stored-state features of the responses API (the gateway is stateless). */
export const unsupported = (summary: string, params: unknown[]) => op({
  summary, tags: ['responses'], params,
  responses: { 501: answer(ref('ErrorEnvelope'), 'Always: `unsupported_feature` (stored responses are not kept)') },
});

export const list = (item: string) => obj({ object: oneOf(['list']), data: arr(ref(item)) }, ['object', 'data']);
export { cursorList, dataOf };
