import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Writes a run's figures to `<dir>/<name>.json`, or `<name>-2.json`, `-3` ... when that file exists: a run never
 * replaces an earlier one that the README may cite. Returns the file written.
 */
export function writeResultFile(dir: string, name: string, result: unknown): string {
  mkdirSync(dir, { recursive: true });
  let file = path.join(dir, `${name}.json`);
  for (let n = 2; existsSync(file); n++) file = path.join(dir, `${name}-${n}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
