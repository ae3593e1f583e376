/**
 * An abort signal that fires on the caller's signal or after `timeoutMs`, remembering which one it was so a
 * timeout can be reported as a timeout and a caller's cancellation as the caller's own reason.
 */
export class Deadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private expired = false;
  private readonly onCallerAbort = () => this.controller.abort(this.callerSignal?.reason);

  constructor(readonly timeoutMs: number, private readonly callerSignal?: AbortSignal) {
    this.signal = this.controller.signal;
    if (callerSignal?.aborted) {
      this.controller.abort(callerSignal.reason);
      return;
    }
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new Error(`deadline of ${timeoutMs} ms exceeded`));
    }, timeoutMs);
  }

  get timedOut(): boolean {
    return this.expired;
  }

  get cancelledByCaller(): boolean {
    return this.callerSignal?.aborted === true && !this.expired;
  }

  /** Stops the timer; the caller's signal still aborts. */
  stopTimer(): void {
    clearTimeout(this.timer);
  }

  dispose(): void {
    this.stopTimer();
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }
}
