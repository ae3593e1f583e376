import { cappedChunks, declaredLengthOf } from '@gw/platform';
import type { z } from 'zod';
import type { UpstreamAnswer } from './arrived-bytes-request';
import { malformedUpstreamError, oversizedUpstreamError } from './upstream-errors';

/**
 * The most of a 2xx JSON answer the gateway reads: ten of the largest images as base64, or a long answer with
 * every token's log probabilities, fit; a provider that sends more cannot take the gateway's memory with it.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** JSON text from the upstream; anything else is a malformed `what` (e.g. `response`, `stream event`). */
export function parseUpstreamJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformedUpstreamError(what);
  }
}

/** `json` checked against `schema`; a value of any other shape is a malformed `what`. */
export function checkUpstreamShape<S extends z.ZodType>(json: unknown, schema: S, what: string): z.output<S> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw malformedUpstreamError(what);
  return parsed.data;
}

/**
 * A 2xx answer's text, at most `maxBytes` of it; past that the body is dropped and the answer refused. Within a
 * declared length it is read whole; a body without one is counted as it arrives.
 */
export async function readAnswerText(res: UpstreamAnswer, maxBytes = MAX_ANSWER_BYTES): Promise<string> {
  const declaredLength = res.headers['content-length'];
  if (declaredLengthOf(declaredLength) <= maxBytes) return res.body.text();
  const parts: Uint8Array[] = [];
  const drop = () => res.body.destroy();
  for await (const part of cappedChunks(res.body, declaredLength, maxBytes, () => oversizedUpstreamError('response', maxBytes), drop)) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}

/** The body of a 2xx answer: its JSON as sent, and that JSON read through `schema`. */
export async function readJsonAnswer<S extends z.ZodType>(res: UpstreamAnswer, schema: S, maxBytes = MAX_ANSWER_BYTES): Promise<{ json: unknown; data: z.output<S> }> {
  const json = parseUpstreamJson(await readAnswerText(res, maxBytes), 'response');
  return { json, data: checkUpstreamShape(json, schema, 'response') };
}

/**
 * An error body (the text of an error answer, or an in-stream event already parsed) read through the wire
 * format's error `schema`; undefined when it is not JSON or not of that shape.
 */
export function parseErrorBody<S extends z.ZodType>(body: string | unknown, schema: S): z.output<S> | undefined {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
