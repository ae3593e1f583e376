import { simulatedErrorStatus } from './http-kit';
import { messageText } from './openai/simulated-chat';

/**
 * The knobs both simulated batch APIs share. By the lines' model: `sim-batch-expire` ends the batch expired
 * after running the first half of its lines; `sim-batch-fail` fails it as a whole (where the format can).
 * By a line: a last user message starting with `sim-error-<status>` makes that line fail with that status, and
 * one starting with `sim-broken-result` makes its line of the results file cut short (not JSON), as a provider's
 * damaged file would be.
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

/** The first word of the last user message, where a line's knob is. */
function lineKnob(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null;
    if (m?.role !== 'user') continue;
    return messageText(m.content).trim().split(/\s/, 1)[0] ?? '';
  }
  return '';
}

/** The status a line asks to fail with, from its last user message; undefined for an ordinary line. */
export function lineErrorStatus(messages: unknown[]): number | undefined {
  return simulatedErrorStatus(lineKnob(messages));
}

/** Whether a line asks for its results line to be cut short. */
export function asksForBrokenResult(messages: unknown[]): boolean {
  return lineKnob(messages) === 'sim-broken-result';
}

/** A results line cut short: the start of the line `custom_id` would have had, and no more. */
export function brokenResultLine(customId: string): string {
  return `{"custom_id":${JSON.stringify(customId)},"res`;
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
