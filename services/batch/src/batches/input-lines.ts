import type { Readable } from 'node:stream';
import { checkBodyDepth, InputError } from '@gw/platform';
import { jsonlLines, type JsonlLine } from './jsonl';

/** One request of a batch input file (API-NOTES: batch input line). */
export interface InputLine {
  line: number;
  custom_id: string;
  body: Record<string, unknown>;
}

export interface LineProblem {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAX_CUSTOM_ID = 512;
const LINE_FIELDS = ['custom_id', 'method', 'url', 'body'];

/**
 * The shape checks of one line: JSON, only the line's four fields, `custom_id`, `method` POST, `url` = the
 * batch's endpoint, and a chat body (a model and messages, within the JSON bounds; the full chat validation
 * happens in inference, per line, as on HTTP).
 */
export function parseInputLine(read: JsonlLine, endpoint: string, maxLineBytes: number): InputLine | LineProblem {
  const { line } = read;
  const problem = (code: string, message: string, param: string | null = null): LineProblem => ({ code, message: `Line ${line}: ${message}`, param, line });
  if (read.text === null) {
    return read.unreadable === 'too_large' ? problem('line_too_large', `the line exceeds ${maxLineBytes} bytes`) : problem('invalid_utf8', 'not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.text);
  } catch {
    return problem('invalid_json', 'not valid JSON');
  }
  if (!isObject(parsed)) return problem('invalid_json', 'must be a JSON object');
  // A request field written beside `body` (a common slip) would otherwise be dropped without a word.
  const unknown = Object.keys(parsed).find((k) => !LINE_FIELDS.includes(k));
  if (unknown !== undefined) {
    return problem('unknown_parameter', `${unknown} is not a field of a batch line (${LINE_FIELDS.join(', ')}); request fields go inside body`, unknown);
  }
  const { custom_id: customId, method, url, body } = parsed;
  if (typeof customId !== 'string' || customId.length === 0 || customId.length > MAX_CUSTOM_ID) {
    return problem('invalid_custom_id', `custom_id must be a string of 1 to ${MAX_CUSTOM_ID} characters`, 'custom_id');
  }
  if (method !== 'POST') return problem('invalid_method', 'method must be "POST"', 'method');
  if (url !== endpoint) return problem('invalid_url', `url must be "${endpoint}", the batch's endpoint`, 'url');
  if (!isObject(body)) return problem('invalid_body', 'body must be a chat completion request object', 'body');
  if (typeof body.model !== 'string' || body.model.length === 0) return problem('invalid_body', 'body.model must be a model name', 'body.model');
  if (!Array.isArray(body.messages) || body.messages.length === 0 || !body.messages.every((m) => isObject(m) && typeof m.role === 'string')) {
    return problem('invalid_body', 'body.messages must be a non-empty array of messages with a role', 'body.messages');
  }
  if (body.stream === true) return problem('invalid_body', 'batch lines are not streamed: omit body.stream', 'body.stream');
  try {
    // Here, when the batch is created, rather than per line as it runs: a body nested deep enough could not even be
    // serialized for its inference call (a 500).
    checkBodyDepth(body, 'body.');
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    return problem('invalid_body', err.message, err.param);
  }
  return { line, custom_id: customId, body };
}

export const isProblem = (v: InputLine | LineProblem): v is LineProblem => 'code' in v;

export interface InputCheck {
  /** The one `body.model` of the file (the first line's when lines disagree). */
  clientModel: string | null;
  total: number;
  /** Up to `maxProblems` problems, in file order. */
  problems: LineProblem[];
}

/** Reads a whole input file once: every line's shape, unique `custom_id`s, one model. */
export async function checkInputFile(source: Readable, opts: { endpoint: string; maxLineBytes: number; maxProblems?: number }): Promise<InputCheck> {
  const maxProblems = opts.maxProblems ?? 100;
  const seen = new Set<string>();
  const problems: LineProblem[] = [];
  let clientModel: string | null = null;
  let total = 0;
  for await (const read of jsonlLines(source, opts.maxLineBytes)) {
    total++;
    const { line } = read;
    const parsed = parseInputLine(read, opts.endpoint, opts.maxLineBytes);
    if (isProblem(parsed)) {
      if (problems.length < maxProblems) problems.push(parsed);
      continue;
    }
    const model = parsed.body.model as string;
    clientModel ??= model;
    if (model !== clientModel && problems.length < maxProblems) {
      problems.push({ code: 'mixed_models', message: `Line ${line}: body.model "${model}" differs from "${clientModel}": a batch uses one model`, param: 'body.model', line });
    }
    if (seen.has(parsed.custom_id)) {
      if (problems.length < maxProblems) problems.push({ code: 'duplicate_custom_id', message: `Line ${line}: custom_id "${parsed.custom_id}" is used more than once`, param: 'custom_id', line });
    } else {
      seen.add(parsed.custom_id);
    }
  }
  return { clientModel, total, problems };
}

/** The input's requests in file order (the file was checked when the batch was created). */
export async function* inputRequests(source: Readable, endpoint: string, maxLineBytes: number): AsyncGenerator<InputLine> {
  for await (const read of jsonlLines(source, maxLineBytes)) {
    const parsed = parseInputLine(read, endpoint, maxLineBytes);
    if (!isProblem(parsed)) yield parsed;
  }
}
