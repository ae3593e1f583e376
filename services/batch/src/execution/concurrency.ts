/** A counting semaphore: `acquire` resolves when one of `size` slots is free. */
export class Semaphore {
  private inUse = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async acquire(): Promise<void> {
    if (this.inUse < this.size) {
      this.inUse++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.inUse--;
  }

  get idle(): boolean {
    return this.inUse === 0 && this.waiters.length === 0;
  }
}

/** One semaphore per account, dropped when idle, bounding an account's lines in flight in this instance. */
export class AccountLimits {
  private readonly byAccount = new Map<string, Semaphore>();

  constructor(private readonly perAccount: number) {}

  async acquire(accountId: string): Promise<() => void> {
    let sem = this.byAccount.get(accountId);
    if (!sem) {
      sem = new Semaphore(this.perAccount);
      this.byAccount.set(accountId, sem);
    }
    await sem.acquire();
    const held = sem;
    return () => {
      held.release();
      if (held.idle && this.byAccount.get(accountId) === held) this.byAccount.delete(accountId);
    };
  }
}
