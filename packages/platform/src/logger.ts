import pino from 'pino';

export type Logger = pino.Logger;

/**
 * JSON logs naming their service once (`service`; null for a process hosting several services, which binds
 * each with `logger.child({ service })`). Secrets are redacted wherever they may appear. Requests bind
 * `traceId` (and `requestId` once known) with `logger.child`.
 */
export function createLogger(service: string | null, level = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  return pino({
    level,
    base: service ? { service } : {},
    redact: {
      paths: ['authorization', 'headers.authorization', 'headers["x-api-key"]', '*.apiKey', '*.secret', 'key', 'secret', 'apiKey'],
      censor: '[redacted]',
    },
  }, destination);
}

/**
 * `parent.child(bindings)`, made on first use. Each request has a logger of its own, and most requests log
 * nothing, while pino serializes a child's bindings as it makes it (1-2% of a busy gateway's main thread).
 */
export function lazyChild(parent: Logger, bindings: pino.Bindings): Logger {
  return new Proxy<LazyChild>({ parent, bindings, made: undefined }, LAZY_CHILD) as unknown as Logger;
}

/** A lazy child's state; one handler serves them all, so a request's logger is two objects and no closures. */
interface LazyChild {
  parent: Logger;
  bindings: pino.Bindings;
  made: Logger | undefined;
}

const realOf = (lazy: LazyChild): Logger => (lazy.made ??= lazy.parent.child(lazy.bindings));

const LAZY_CHILD: ProxyHandler<LazyChild> = {
  get(lazy, prop) {
    const logger = realOf(lazy);
    const value: unknown = Reflect.get(logger, prop, logger);
    return typeof value === 'function' ? value.bind(logger) : value;
  },
  set: (lazy, prop, value) => Reflect.set(realOf(lazy), prop, value),
  has: (lazy, prop) => Reflect.has(realOf(lazy), prop),
};
