import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type Figures = Record<string, number | string | boolean>;

const OUT = path.resolve(__dirname, '../../.cache/drills');

/**
 * What a drill measured: printed (CI's log is where the README's reliability figures come from) and kept in
 * .cache/drills/<drill>.json for the last run.
 */
export function reportFigures(drill: string, figures: Figures): void {
  mkdirSync(OUT, { recursive: true });
  const record = { drill, at: new Date().toISOString(), ...figures };
  writeFileSync(path.join(OUT, `${drill}.json`), `${JSON.stringify(record, null, 2)}\n`);
  process.stdout.write(`DRILL ${drill} ${JSON.stringify(figures)}\n`);
}
