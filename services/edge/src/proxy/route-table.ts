import type { EventStreamFormat } from '@gw/platform';

/** Which service owns a public path, and whether the path needs an API key. */
export type Upstream = 'inference' | 'keys' | 'billing' | 'batch' | 'webhooks' | 'media';

export interface RouteMatch {
  upstream: Upstream;
  auth: 'required' | 'optional';
  /** `x-api-key` is accepted as well as Bearer (messages-style clients). */
  allowXApiKey: boolean;
}

const exactOrUnder = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** Explicit table: a path no service owns is a 404 at the edge, never forwarded. */
export function matchRoute(path: string): RouteMatch | null {
  if (exactOrUnder(path, '/v1/models')) return { upstream: 'inference', auth: 'optional', allowXApiKey: false };
  if (path === '/v1/chat/completions') return { upstream: 'inference', auth: 'required', allowXApiKey: false };
  if (exactOrUnder(path, '/v1/responses')) return { upstream: 'inference', auth: 'required', allowXApiKey: false };
  if (path === '/v1/messages' || path === '/v1/messages/count_tokens') return { upstream: 'inference', auth: 'required', allowXApiKey: true };
  if (exactOrUnder(path, '/v1/async/chat/completions')) return { upstream: 'inference', auth: 'required', allowXApiKey: false };
  if (path === '/v1/key' || exactOrUnder(path, '/v1/keys')) return { upstream: 'keys', auth: 'required', allowXApiKey: false };
  if (path.startsWith('/v1/billing/')) return { upstream: 'billing', auth: 'required', allowXApiKey: false };
  if (exactOrUnder(path, '/v1/files') || exactOrUnder(path, '/v1/batches')) return { upstream: 'batch', auth: 'required', allowXApiKey: false };
  if (path.startsWith('/v1/webhooks/')) return { upstream: 'webhooks', auth: 'required', allowXApiKey: false };
  if (exactOrUnder(path, '/v1/images') || exactOrUnder(path, '/v1/videos') || path.startsWith('/v1/audio/')) return { upstream: 'media', auth: 'required', allowXApiKey: false };
  // A signed media link is its own credential (checked by media): providers and redirected clients hold no key.
  if (path.startsWith('/v1/media/signed/')) return { upstream: 'media', auth: 'optional', allowXApiKey: false };
  return null;
}

/** The server-sent event format a route streams in, so the edge can end a cut stream in that format. */
export function streamFormatOf(path: string): EventStreamFormat | null {
  if (path === '/v1/chat/completions') return 'chat';
  if (path === '/v1/responses') return 'responses';
  if (path === '/v1/messages') return 'messages';
  // Media streams (image partials, transcript deltas) end a cut stream as chat does: a data line with the envelope.
  if (path === '/v1/images/generations' || path === '/v1/images/edits' || path === '/v1/audio/transcriptions') return 'chat';
  return null;
}
