/**
 * Per-process health memory of deployments: after `threshold` consecutive retryable failures a deployment
 * is skipped for `cooldownMs`; one success clears it.
 */
export class CooldownTracker {
  private readonly failures = new Map<string, number>();
  private readonly coolingUntil = new Map<string, number>();

  constructor(private readonly threshold: number, private readonly cooldownMs: number, private readonly now: () => number = Date.now) {}

  isCooling(id: string): boolean {
    const until = this.coolingUntil.get(id);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.coolingUntil.delete(id);
    return false;
  }

  /** Counts a failure; true when it put the deployment in cooldown. */
  failed(id: string): boolean {
    const n = (this.failures.get(id) ?? 0) + 1;
    this.failures.set(id, n);
    if (n < this.threshold) return false;
    this.coolingUntil.set(id, this.now() + this.cooldownMs);
    this.failures.set(id, 0);
    return true;
  }

  succeeded(id: string): void {
    this.failures.delete(id);
    this.coolingUntil.delete(id);
  }
}
