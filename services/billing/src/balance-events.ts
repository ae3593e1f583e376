import type { TypedBus } from '@gw/bus';
import { TOPICS, type BalanceChanged, type TopicMessages } from '@gw/proto';
import { balanceView, type AccountDoc } from './accounts';
import { keySpendView } from './key-spend';

/** The account's state after a posting, for the caches that pre-authorize on the hot path. */
export function balanceChangedEvent(account: AccountDoc, keys: Iterable<string>, now: Date): BalanceChanged {
  const balance = balanceView(account);
  return {
    account_id: balance.account_id,
    spendable_micros: balance.spendable_micros,
    price_factor_ppm: balance.price_factor_ppm,
    version: balance.version,
    keys: [...new Set(keys)].map((key) => keySpendView(key, account.key_spend?.[key], now)),
  };
}

export async function publishBalanceChanges(bus: TypedBus<TopicMessages>, events: BalanceChanged[]): Promise<void> {
  if (events.length === 0) return;
  await bus.publish(TOPICS.balance, events.map((value) => ({ key: value.account_id, value })));
}
