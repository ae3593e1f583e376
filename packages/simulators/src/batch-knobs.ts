import { simulatedErrorStatus } from './http-kit';
import { messageText } from './openai/simulated-chat';

/**
 * The knobs both simulated batch APIs share. By the lines' model: `sim-batch-expire` ends the batch expired
 * after running the first half of its lines; `sim-batch-fail` fails it as a whole (where the format can).
 * By a line: a last user message starting with `sim-error-<status>` makes that line fail with that status.
 */
export type BatchMode = 'normal' | 'expire' | 'fail';

export function batchModeOf(model: unknown): BatchMode {
  if (model === 'sim-batch-expire') return 'expire';
  if (model === 'sim-batch-fail') return 'fail';
  return 'normal';
}

/** How many lines an expiring batch runs before its window ends: the first half, rounded up. */
export function linesRunBeforeExpiry(total: number): number {
  return Math.ceil(total / 2);
}

/** The status a line asks to fail with, from its last user message; undefined for an ordinary line. */
export function lineErrorStatus(messages: unknown[]): number | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null;
    if (m?.role !== 'user') continue;
    const text = messageText(m.content).trim();
    return simulatedErrorStatus(text.split(/\s/, 1)[0] ?? '');
  }
  return undefined;
}

/** The JSON value of each non-blank line; undefined for a line that is not JSON. */
export function parseJsonLines(content: Buffer): unknown[] {
  return content
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        return undefined;
      }
    });
}
