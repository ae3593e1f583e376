import type { Request } from 'express';
import { match } from 'path-to-regexp';
import { GatewayError, InputError, PayloadTooLargeError, toGatewayError, UnsupportedMediaTypeError } from './errors';

/**
 * The one place where failures raised by express, its router and body-parser (plain errors with a `status`
 * and often a `type`) become typed errors. Each is mapped deliberately: they are the caller's fault, except
 * the two that can only come from our own wiring.
 */
export function fromExpressError(err: unknown, req: Request): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as { type?: string; status?: number; errno?: unknown; expose?: unknown };
  if (err instanceof URIError && e.status === 400) {
    const param = pathParamAtFault(req);
    return new InputError(`Path parameter${param ? ` '${param}'` : ''} is not validly percent-encoded`, param, 'invalid_path_parameter');
  }
  switch (e?.type) {
    case 'entity.too.large': return new PayloadTooLargeError();
    case 'entity.parse.failed': return new InputError('Request body is not valid JSON', null, 'invalid_json');
    case 'charset.unsupported':
      return new UnsupportedMediaTypeError('Unsupported charset in content-type; send the body as UTF-8', 'content-type', 'unsupported_charset');
    case 'encoding.unsupported':
      return new UnsupportedMediaTypeError('Unsupported content-encoding; use gzip, deflate, br, zstd or none', 'content-encoding', 'unsupported_content_encoding');
    case 'request.size.invalid': return new InputError('Request body length does not match content-length', 'content-length', 'invalid_content_length');
    case 'request.aborted': return new InputError('Request body was aborted before it was complete', null, 'request_aborted');
    case 'entity.verify.failed': return new InputError('Request body was refused', null, 'invalid_request');
    // Our wiring consumed or decoded the stream before the parser: a bug of ours, not the caller's.
    case 'stream.encoding.set':
    case 'stream.not.readable':
      return toGatewayError(err);
  }
  // A body that does not decompress (gzip, deflate or br of garbage): body-parser passes zlib's error on as a 400.
  if (e?.status === 400 && typeof e.errno === 'number' && (req.headers['content-encoding'] ?? 'identity') !== 'identity') {
    return new InputError('Request body does not match its content-encoding', 'content-encoding', 'invalid_content_encoding');
  }
  // Any other refusal the express stack marks as the client's (http-errors: 4xx, `expose`) keeps its status.
  if (e?.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new GatewayError('The request was refused', e.status, 'invalid_request_error', 'invalid_request');
  }
  return toGatewayError(err);
}

interface RouterLayer {
  match(path: string): { path: string } | false;
  route?: { path: string | string[] };
  handle: { stack?: RouterLayer[] };
}

/**
 * The router fails to decode a parameter while matching, before any handler knows which route it is. Walk the
 * same layers in the same order to find the first one that fails, and name its parameter that does not decode.
 */
function pathParamAtFault(req: Request): string | null {
  const stack = (req.app as unknown as { router?: { stack?: RouterLayer[] } }).router?.stack;
  return stack ? findInStack(stack, req.baseUrl + req.path) : null;
}

function findInStack(stack: RouterLayer[], path: string): string | null {
  for (const layer of stack) {
    let matched: { path: string } | false;
    try {
      matched = layer.match(path);
    } catch {
      return layer.route ? undecodableParam(layer.route.path, path) : null;
    }
    if (matched && !layer.route && layer.handle.stack) {
      const found = findInStack(layer.handle.stack, path.slice(matched.path.length) || '/');
      if (found) return found;
    }
  }
  return null;
}

function undecodableParam(patterns: string | string[], path: string): string | null {
  for (const pattern of Array.isArray(patterns) ? patterns : [patterns]) {
    const found = match(pattern, { decode: false })(path);
    if (!found) continue;
    for (const [name, raw] of Object.entries(found.params)) {
      if ([raw ?? []].flat().some((segment) => !decodes(segment))) return name;
    }
  }
  return null;
}

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}
