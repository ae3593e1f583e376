import { EventEmitter } from 'node:events';
import { BroadcastChannel } from 'node:worker_threads';
import type { Store } from '@gw/store';

/**
 * Wake-ups per store: a publish (or a released lease) on a topic wakes every consumer of that topic in this
 * thread at once, whichever bus instance it belongs to. With a `channel` name, the wake-up also reaches the
 * other threads of this process that opened the same bus store under that name (their own store instance
 * over the same files). Other processes on a shared store notice on their next poll.
 */
const emitters = new WeakMap<Store, TopicEvents>();

export function topicEvents(store: Store, channel?: string): TopicEvents {
  let emitter = emitters.get(store);
  if (!emitter) {
    emitter = new TopicEvents(channel);
    emitters.set(store, emitter);
  }
  return emitter;
}

/** Stops the store's cross-thread wake-ups (its bus is closing); a later bus on it starts afresh. */
export function closeTopicEvents(store: Store): void {
  emitters.get(store)?.close();
  emitters.delete(store);
}

export class TopicEvents extends EventEmitter {
  private readonly peers: BroadcastChannel | null;

  constructor(channel?: string) {
    super();
    this.setMaxListeners(0);
    this.peers = channel ? new BroadcastChannel(channel) : null;
    if (this.peers) {
      // Wake-ups never keep a thread alive: a thread's bus ends with its store.
      this.peers.unref();
      this.peers.onmessage = (event) => {
        const topic = (event as MessageEvent).data;
        if (typeof topic === 'string') super.emit(topic);
      };
    }
  }

  /** Wakes this thread's consumers of `topic`, and the other threads' on the channel. */
  override emit(topic: string): boolean {
    this.peers?.postMessage(topic);
    return super.emit(topic);
  }

  close(): void {
    this.peers?.close();
  }
}

/**
 * Lets a loop sleep until woken or timed out. A wake-up that arrives while the loop is busy is kept, so the
 * next `wait` returns at once instead of missing it.
 */
export class Waiter {
  private woken = false;
  private release: (() => void) | null = null;

  wake = (): void => {
    this.woken = true;
    this.release?.();
  };

  wait(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.release = null;
        self.woken = false;
        resolve();
      }
      this.release = done;
    });
  }
}
