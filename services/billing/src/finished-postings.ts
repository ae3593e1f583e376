/**
 * How many finished posting ids are remembered (about 100 bytes each): far more than a busy consumer finishes
 * between two statistics prunes, and enough that a quiet account's marks are still found when its next posting
 * drops them.
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
