import {
  authenticatedUnaryHandler, InputError, requireOwnAccount, type GrpcCallAuthenticator, type GrpcCaller, type Logger,
} from '@gw/platform';
import type { BillingServiceHandlers } from '@gw/proto';
import type { BillingService } from './billing-service';
import type { LimitReset } from './key-spend';
import type { SpendHolds } from './spend-holds';

function limitReset(value: string): LimitReset {
  if (value === '') return null;
  if (value === 'daily' || value === 'weekly' || value === 'monthly') return value;
  throw new InputError(`key_limit_reset must be daily, weekly, monthly or empty, not "${value}"`, 'key_limit_reset');
}

function nonNegativeInteger(value: number, param: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new InputError(`${param} must be a non-negative integer`, param);
  return value;
}

function nonNegativeSeconds(value: number, param: string): number {
  if (!Number.isFinite(value) || value < 0 || value > 1e7) throw new InputError(`${param} must be a non-negative number of seconds`, param);
  return value;
}

/** The account the request names, which an API-key caller may only name if it is its own. */
function requireAccount(caller: GrpcCaller, accountId: string): string {
  if (!accountId) throw new InputError('account_id is required', 'account_id');
  requireOwnAccount(caller, accountId);
  return accountId;
}

/** Every RPC spends money or reads account data: each needs a service identity or an API key (see GrpcCallAuthenticator). */
export function billingGrpcHandlers(billing: BillingService, holds: SpendHolds, auth: GrpcCallAuthenticator, logger: Logger): BillingServiceHandlers {
  return {
    Preauthorize: authenticatedUnaryHandler(logger, auth, async (req, caller) => {
      const result = await billing.preauthorize({
        accountId: requireAccount(caller, req.account_id),
        keyHash: req.key_hash,
        keyLimitMicros: req.has_key_limit ? req.key_limit_micros : null,
        keyLimitReset: limitReset(req.key_limit_reset),
      });
      return { balance: result.balance, key_period_usage_micros: result.keyPeriodUsageMicros };
    }),
    GetBalance: authenticatedUnaryHandler(logger, auth, async (req, caller) => billing.balance(requireAccount(caller, req.account_id))),
    GetKeyUsage: authenticatedUnaryHandler(logger, auth, async (req, caller) => ({ usage: await billing.keyUsage(req.key_hashes, caller.accountId) })),
    Reserve: authenticatedUnaryHandler(logger, auth, async (req, caller) => {
      const held = await holds.reserve({
        accountId: requireAccount(caller, req.account_id),
        keyHash: req.key_hash,
        keyLimitMicros: req.has_key_limit ? req.key_limit_micros : null,
        keyLimitReset: limitReset(req.key_limit_reset),
        requestId: req.request_id,
        deployments: req.deployments,
        bounds: {
          promptTokens: nonNegativeInteger(req.prompt_tokens, 'prompt_tokens'),
          completionTokens: nonNegativeInteger(req.max_output_tokens, 'max_output_tokens'),
          images: nonNegativeInteger(req.max_images, 'max_images'),
          audioSeconds: nonNegativeSeconds(req.max_audio_seconds, 'max_audio_seconds'),
          videoSeconds: nonNegativeSeconds(req.max_video_seconds, 'max_video_seconds'),
        },
        grantMicros: nonNegativeInteger(req.grant_micros, 'grant_micros'),
      });
      return { held_micros: held.heldMicros, call_micros: held.callMicros, price_factor_ppm: held.priceFactorPpm };
    }),
    GetRequestCharges: authenticatedUnaryHandler(logger, auth, async (req, caller) => ({
      charges: await billing.requestCharges(requireAccount(caller, req.account_id), req.request_ids),
    })),
    Release: authenticatedUnaryHandler(logger, auth, async (req, caller) => ({
      released: req.retire_grant
        ? await holds.retireGrant(requireAccount(caller, req.account_id), req.request_id, nonNegativeInteger(req.unused_micros, 'unused_micros'))
        : await holds.release(requireAccount(caller, req.account_id), req.request_id),
    })),
  };
}
