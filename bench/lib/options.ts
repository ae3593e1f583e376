/** Command-line values the benchmarks share: the round flags, bounded integers, NAME=value variables. */
import * as path from 'node:path';
import { ROOT } from './children';

/** The flags of a benchmark that measures in rounds: connections, how long, how many rounds, where the JSON goes. */
export function roundOptions(connections: string) {
  return {
    connections: { type: 'string', default: connections },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: path.join(ROOT, 'bench', 'results') },
    'no-save': { type: 'boolean', default: false },
  } as const;
}

/** The round flags' values, checked: seconds per run and of warm-up, rounds, and where (whether) the JSON goes. */
export function roundValues(values: { duration: string; warmup: string; rounds: string; out: string; 'no-save': boolean }) {
  return {
    durationS: intOption(values.duration, '--duration', 1, 600),
    warmupS: intOption(values.warmup, '--warmup', 0, 120),
    rounds: intOption(values.rounds, '--rounds', 1, 10),
    outDir: path.resolve(values.out),
    save: !values['no-save'],
  };
}

/** An integer flag's value within [min, max], or an error naming the flag. */
export function intOption(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} must be an integer in [${min}, ${max}], got "${value}"`);
  return n;
}

/** Repeated `NAME=value` flags as an environment to add to a child's. */
export function envOption(pairs: string[], flag: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!m) throw new Error(`${flag} takes NAME=value, got "${pair}"`);
    env[m[1]] = m[2];
  }
  return env;
}
