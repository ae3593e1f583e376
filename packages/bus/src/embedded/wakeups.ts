import { EventEmitter } from 'node:events';
import type { Store } from '@gw/store';

/**
 * In-process wake-ups per store: a publish (or a released lease) on a topic wakes every consumer of that
 * topic in this process at once, whichever bus instance it belongs to. Other processes on a shared store
 * notice on their next poll.
 */
const emitters = new WeakMap<Store, EventEmitter>();

export function topicEvents(store: Store): EventEmitter {
  let emitter = emitters.get(store);
  if (!emitter) {
    emitter = new EventEmitter();
    emitter.setMaxListeners(0);
    emitters.set(store, emitter);
  }
  return emitter;
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
