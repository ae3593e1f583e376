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
