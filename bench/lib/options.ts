/** Command-line values the benchmarks share: bounded integers, NAME=value variables. */

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
