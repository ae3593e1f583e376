import { bool, type Logger } from '@gw/platform';
import type { OutboundPolicy } from './check-url';

/**
 * `GATEWAY_ALLOW_LOOPBACK_CALLBACKS`: test-only. Lets the gateway call URLs on loopback (127.0.0.0/8, ::1) so
 * an end-to-end test can run its receiver on the same machine. Every other internal range stays refused.
 * Spread into a service's config schema.
 */
export const outboundGuardEnv = {
  GATEWAY_ALLOW_LOOPBACK_CALLBACKS: bool(false),
};

/** The production policy, or the loopback exception when configured, said loudly at startup. */
export function outboundPolicyFromConfig(config: { GATEWAY_ALLOW_LOOPBACK_CALLBACKS: boolean }, logger: Logger): OutboundPolicy {
  if (!config.GATEWAY_ALLOW_LOOPBACK_CALLBACKS) return {};
  logger.warn('GATEWAY_ALLOW_LOOPBACK_CALLBACKS=true: callbacks and fetches may reach loopback addresses. Test use only; never set it in production.');
  return { allowLoopback: true };
}
