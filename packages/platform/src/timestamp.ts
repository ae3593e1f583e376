/**
 * An ISO 8601 date-time with an explicit zone, in the RFC 3339 profile (`2027-01-31T12:00:00Z`, `...+02:00`,
 * fractions to nanoseconds) or with seconds or the offset's colon left out (`2027-01-31T12:00+0200`), or a full
 * date read as midnight UTC (`2027-01-31`), as milliseconds since the epoch; null for anything else.
 * Every field is range-checked: `Date.parse` alone turns February 30 into March 2 and a bare local time into
 * whatever the server's zone makes of it.
 */
const ISO_8601_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2})))?$/;

export function parseTimestamp(text: string): number | null {
  const m = ISO_8601_TIMESTAMP.exec(text);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (m[4] === undefined) return utc(year, month, day, 0, 0, 0, 0);
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59) return null;
  const offsetMinutes = m[8] !== undefined ? 0 : offset(m[9], Number(m[10]), Number(m[11]));
  if (offsetMinutes === null) return null;
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  return utc(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
}

/** `Date.UTC`, but years 0 to 99 are those years, not 1900 to 1999. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number): number {
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millis));
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

function offset(sign: string, hours: number, minutes: number): number | null {
  if (hours > 23 || minutes > 59) return null;
  return (sign === '-' ? -1 : 1) * (hours * 60 + minutes);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}
