import type { Bus } from '../port';

/** A real bus whose publish can be made to fail, as during a broker outage. */
export function switchableBus(inner: Bus): { bus: Bus; setDown(down: boolean): void; publishCalls(): number } {
  let down = false;
  let calls = 0;
  const bus: Bus = {
    engine: inner.engine,
    publish: (topic, messages) => {
      calls++;
      return down ? Promise.reject(new Error('bus is down (test)')) : inner.publish(topic, messages);
    },
    subscribe: (opts) => inner.subscribe(opts),
    ping: async () => !down && (await inner.ping()),
    close: () => inner.close(),
  };
  return { bus, setDown: (d) => void (down = d), publishCalls: () => calls };
}
