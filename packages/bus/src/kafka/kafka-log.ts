import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '@gw/platform';

/**
 * kafkajs is chatty at info, and logs every retriable protocol error response ("coordinator is loading")
 * at error even though it retries them: only its warnings and errors reach pino, both at warn. Failures
 * that matter surface to us as thrown errors or crash events, which we log ourselves.
 */
export const KAFKA_LOG_LEVEL = logLevel.WARN;

export function pinoLogCreator(logger: Logger): logCreator {
  const log = logger.child({ component: 'kafkajs' });
  return () => ({ namespace, level, log: entry }) => {
    const { message, timestamp: _timestamp, ...extra } = entry;
    const fields = { namespace, ...extra };
    if (level === logLevel.ERROR || level === logLevel.WARN) log.warn(fields, message);
    else if (level === logLevel.INFO) log.info(fields, message);
    else log.debug(fields, message);
  };
}
