import { startGrpcServer, unaryHandler, type GrpcServerHandle, type Health, type Logger } from '@gw/platform';
import { keysProto, type KeysServiceHandlers } from '@gw/proto';
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
  };
}

/**
 * gateway.keys.v1.KeysService plus grpc.health.v1 on one server. Refusals map to UNAUTHENTICATED.
 * `Authenticate` needs no other credential: the secret it checks is the credential, and it answers only
 * about that key (its own account, hash and limit), which the caller already controls. Callers without the
 * secret learn nothing beyond "not a key", at the cost of a hash lookup.
 */
export function startKeysGrpcServer(opts: { address: string; service: KeysService; health: Health; logger: Logger }): Promise<GrpcServerHandle> {
  const handlers: KeysServiceHandlers = {
    Authenticate: unaryHandler(opts.logger, async (req) => toAuthenticateResponse(await opts.service.authenticate(req.secret))),
  };
  return startGrpcServer(opts.address, (server) => {
    server.addService(keysProto.gateway.keys.v1.KeysService.service, handlers);
    opts.health.register(server);
  });
}
