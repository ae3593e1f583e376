import type { IncomingHttpHeaders } from 'node:http';
import { parseErrorBody } from '../http/upstream-json';
import { mapUpstreamHttpError, type TaggedError } from '../http/upstream-errors';
import { seedanceErrorSchema } from './seedance-api';

/** Maps a non-2xx Ark answer (Seedance, Seedream) (`{error: {code, message, param}}`) as every provider's is mapped. */
export function mapArkHttpError(status: number, headers: IncomingHttpHeaders, bodyText: string): TaggedError {
  const parsed = parseErrorBody(bodyText, seedanceErrorSchema);
  return mapUpstreamHttpError(status, headers, {
    message: parsed?.error.message ?? undefined,
    param: parsed?.error.param ?? null,
    code: parsed?.error.code ?? null,
  });
}
