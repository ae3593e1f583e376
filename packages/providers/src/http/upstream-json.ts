import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { malformedUpstreamError } from './upstream-errors';

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

/** The body of a 2xx answer: its JSON as sent, and that JSON read through `schema`. */
export async function readJsonAnswer<S extends z.ZodType>(res: Dispatcher.ResponseData, schema: S): Promise<{ json: unknown; data: z.output<S> }> {
  const json = parseUpstreamJson(await res.body.text(), 'response');
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
