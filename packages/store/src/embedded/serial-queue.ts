/**
 * Runs tasks one at a time, in submission order. Every mutation of one embedded collection goes through its
 * queue, so a read-modify-write (guarded `$inc`, claim with `findOneAndUpdate`) is atomic within the process.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<R>(task: () => Promise<R>): Promise<R> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every task submitted so far has settled. */
  async idle(): Promise<void> {
    await this.tail;
  }
}
