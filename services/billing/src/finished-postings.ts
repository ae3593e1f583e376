/**
 * How many finished posting ids are remembered: more than a busy consumer finishes in the statistics' prune
 * delay (5 min) plus a prune interval, so the pruner finds its marks here (about 100 bytes each).
 */
const FINISHED_POSTINGS_KEPT = 100_000;

/**
 * Posting ids whose documents (ledger entries, failed calls) this process marked `applied`: a fact in the
 * store, as nothing goes back to `applying`. Remembered so that dropping a posting's marks (on the account,
 * on statistics rows) needs no lookup by posting. Bounded; forgetting one only costs that lookup.
 */
export class FinishedPostings {
  private readonly ids = new Set<string>();

  add(ids: readonly string[]): void {
    for (const id of ids) {
      this.ids.delete(id);
      this.ids.add(id);
    }
    for (const id of this.ids) {
      if (this.ids.size <= FINISHED_POSTINGS_KEPT) break;
      this.ids.delete(id);
    }
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }
}
