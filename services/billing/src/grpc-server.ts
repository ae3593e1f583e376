import { InputError, startGrpcServer, unaryHandler, type GrpcServerHandle, type Health, type Logger } from '@gw/platform';
import { billingProto, type BillingServiceHandlers } from '@gw/proto';
import type { BillingService } from './billing-service';
import type { LimitReset } from './key-spend';

function limitReset(value: string): LimitReset {
  if (value === '') return null;
  if (value === 'daily' || value === 'weekly' || value === 'monthly') return value;
  throw new InputError(`key_limit_reset must be daily, weekly, monthly or empty, not "${value}"`, 'key_limit_reset');
}

function requireAccount(accountId: string): string {
  if (!accountId) throw new InputError('account_id is required', 'account_id');
  return accountId;
}

export function billingGrpcHandlers(billing: BillingService, logger: Logger): BillingServiceHandlers {
  return {
    Preauthorize: unaryHandler(logger, async (req) => {
      const result = await billing.preauthorize({
        accountId: requireAccount(req.account_id),
        keyHash: req.key_hash,
        keyLimitMicros: req.has_key_limit ? req.key_limit_micros : null,
        keyLimitReset: limitReset(req.key_limit_reset),
      });
      return { balance: result.balance, key_period_usage_micros: result.keyPeriodUsageMicros };
    }),
    GetBalance: unaryHandler(logger, async (req) => billing.balance(requireAccount(req.account_id))),
    GetKeyUsage: unaryHandler(logger, async (req) => ({ usage: await billing.keyUsage(req.key_hashes) })),
  };
}

/** BillingService plus grpc.health.v1 answering from the same readiness checks as `/readyz`. */
export function startBillingGrpcServer(opts: { billing: BillingService; health: Health; logger: Logger; port: number; host?: string }): Promise<GrpcServerHandle> {
  return startGrpcServer(`${opts.host ?? '0.0.0.0'}:${opts.port}`, (server) => {
    server.addService(billingProto.gateway.billing.v1.BillingService.service, billingGrpcHandlers(opts.billing, opts.logger));
    opts.health.register(server);
  });
}
