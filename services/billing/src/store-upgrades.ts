import type { Collection, Doc, Filter, Store } from '@gw/store';

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

/** The documents matching `filter`, `size` at a time in `_id` order, so an upgrade of a large store stays in bounded memory. */
export async function* pagesById<T extends Doc>(collection: Collection<T>, filter: Filter, size = 500): AsyncGenerator<T[]> {
  let after = '';
  for (;;) {
    const page = await collection.find({ ...filter, _id: { $gt: after } }, { sort: { _id: 1 }, limit: size });
    if (page.length === 0) return;
    after = page[page.length - 1]._id;
    yield page;
  }
}
