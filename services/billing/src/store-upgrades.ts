import type { Doc, Store } from '@gw/store';

interface UpgradeMark extends Doc {
  done_at_ms: number;
}

/**
 * Runs a one-time upgrade of a store's data unless its mark (`id` in `collection`) says it ran. The mark is
 * written last, with the counts the upgrade returns, so an upgrade cut short runs again at the next start:
 * each upgrade must be safe to repeat.
 */
export async function oncePerStore(store: Store, collection: string, id: string, nowMs: number, upgrade: () => Promise<Record<string, number>>): Promise<void> {
  const marks = store.collection<UpgradeMark>(collection);
  if (await marks.findOne({ _id: id })) return;
  const counts = await upgrade();
  await marks.updateOne({ _id: id }, { $set: { done_at_ms: nowMs, ...counts } }, { upsert: true });
}
