import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { errors, type Dispatcher } from 'undici';

/** An answer from upstream: undici's own, or one from requestKeepingArrivedBytes. */
export interface UpstreamAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable & { text(): Promise<string> };
}

/**
 * Sends a request whose answer body, when the connection fails, first gives every byte that arrived and then the
 * failure. undici's request() destroys its body at the failure, dropping what was not read yet; a provider's last
 * events before it cut a stream (all of them, when they came in one read with the cut) then never reached the
 * client, and the more so the busier the gateway.
 */
export function requestKeepingArrivedBytes(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions & { signal?: AbortSignal }): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const { signal, ...dispatchOptions } = options;
    try {
      dispatcher.dispatch(dispatchOptions, new ArrivedBytesHandler(signal, resolve, reject));
    } catch (err) {
      reject(err);
    }
  });
}

class ArrivedBytesHandler implements Dispatcher.DispatchHandler {
  private body: ArrivedBytesBody | null = null;
  private stopListening = (): void => {};

  constructor(
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (answer: UpstreamAnswer) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    const signal = this.signal;
    if (!signal) return;
    if (signal.aborted) return controller.abort(abortReason(signal));
    const onAbort = () => controller.abort(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    this.stopListening = () => signal.removeEventListener('abort', onAbort);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return; // an informational answer; the real one follows
    this.body = new ArrivedBytesBody(controller);
    this.resolve({ statusCode, headers, body: this.body });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.body && !this.body.destroyed && !this.body.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.stopListening();
    if (this.body && !this.body.destroyed) this.body.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.stopListening();
    if (this.body) this.body.failAfterArrived(err);
    else this.reject(err);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new errors.RequestAbortedError();
}

class ArrivedBytesBody extends Readable {
  private failure: Error | null = null;
  private settled = false;

  constructor(private readonly controller: Dispatcher.DispatchController) {
    super();
    this.once('end', () => (this.settled = true));
  }

  override _read(): void {
    this.controller.resume();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Left before its end (or failed): stop the transfer; the connection is not reused.
    if (!this.settled) {
      this.settled = true;
      this.controller.abort(err ?? new errors.RequestAbortedError());
    }
    callback(err);
  }

  /** The connection failed: the reader gets what is buffered, then `err`. */
  failAfterArrived(err: Error): void {
    this.settled = true;
    if (this.destroyed) return;
    if (this.readableLength === 0) this.destroy(err);
    else this.failure = err;
  }

  override read(size?: number): unknown {
    const chunk: unknown = super.read(size);
    if (this.failure !== null && this.readableLength === 0) {
      const err = this.failure;
      this.failure = null;
      // Once the reader has the last chunk in hand.
      queueMicrotask(() => this.destroy(err));
    }
    return chunk;
  }

  async text(): Promise<string> {
    const parts: Buffer[] = [];
    for await (const part of this) parts.push(part as Buffer);
    return Buffer.concat(parts).toString('utf8');
  }
}
