/**
 * Money is integer micro-units (1 USD = 1,000,000). Conversions to and from decimal strings are exact:
 * no floating-point arithmetic touches an amount.
 */
export const MICROS_PER_USD = 1_000_000;

/** `12345678` -> `"12.345678"`, `-5` -> `"-0.000005"`. */
export function microsToUsd(micros: number): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`not an integer amount: ${micros}`);
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const frac = String(abs % MICROS_PER_USD).padStart(6, '0');
  return `${sign}${whole}.${frac}`;
}

/** Parses a USD decimal (string or number as written in config) into micros; more than 6 decimals is refused. */
export function usdToMicros(value: string | number): number {
  const text = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  const m = /^(-)?(\d+)(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) throw new RangeError(`not a USD amount with at most 6 decimals: ${value}`);
  const micros = Number(m[2]) * MICROS_PER_USD + Number((m[3] ?? '').padEnd(6, '0'));
  if (!Number.isSafeInteger(micros)) throw new RangeError(`amount out of range: ${value}`);
  return m[1] ? -micros : micros;
}

function numberToPlainString(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite amount: ${n}`);
  // toFixed(7) then trimming keeps e.g. 0.1 as "0.1" without exponent notation; a 7th digit is then refused.
  const text = n.toFixed(7).replace(/0+$/, '').replace(/\.$/, '');
  // toFixed rounds past the 7th decimal (1e-8 -> "0"): a string that is not the number itself is refused.
  if (Number(text) !== n) throw new RangeError(`not a USD amount with at most 6 decimals: ${n}`);
  return text;
}
