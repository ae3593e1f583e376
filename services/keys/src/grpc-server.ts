import { unaryHandler, type Logger } from '@gw/platform';
import type { KeysServiceHandlers } from '@gw/proto';
import type { KeyDoc } from './key-store';
import type { KeysService } from './keys-service';

/** `KeyDoc` -> `AuthenticateResponse` (proto3 has no null: flags and zero values stand in). */
export function toAuthenticateResponse(doc: KeyDoc) {
  return {
    account_id: doc.account_id,
    key_hash: doc._id,
    is_management: doc.is_management,
    limit_micros: doc.limit_micros ?? 0,
    has_limit: doc.limit_micros !== null,
    limit_reset: doc.limit_reset ?? '',
    expires_at_ms: doc.expires_at === null ? 0 : Date.parse(doc.expires_at),
    requests_per_minute: doc.requests_per_minute ?? 0,
    tokens_per_minute: doc.tokens_per_minute ?? 0,
  };
}

/**
 * gateway.keys.v1.KeysService (served next to grpc.health.v1 by the chassis). Refusals map to UNAUTHENTICATED.
 * `Authenticate` needs no other credential: the secret it checks is the credential, and it answers only
 * about that key (its own account, hash and limit), which the caller already controls. Callers without the
 * secret learn nothing beyond "not a key", at the cost of a hash lookup.
 */
export function keysGrpcHandlers(service: KeysService, logger: Logger): KeysServiceHandlers {
  return {
    Authenticate: unaryHandler(logger, async (req) => toAuthenticateResponse(await service.authenticate(req.secret))),
  };
}
