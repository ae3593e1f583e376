import { parseTimestamp } from './timestamp';

describe('parseTimestamp', () => {
  it.each([
    ['2027-01-31T12:00:00Z', '2027-01-31T12:00:00.000Z'],
    ['2027-01-31t12:00:00z', '2027-01-31T12:00:00.000Z'],
    ['2027-01-31T12:00:00.5Z', '2027-01-31T12:00:00.500Z'],
    ['2027-01-31T12:00:00.123456789Z', '2027-01-31T12:00:00.123Z'],
    ['2027-01-31T12:00:00+02:00', '2027-01-31T10:00:00.000Z'],
    ['2027-01-31T00:30:00-01:30', '2027-01-31T02:00:00.000Z'],
    ['2027-01-31T12:00Z', '2027-01-31T12:00:00.000Z'],
    ['2027-01-31T12:00:00+0200', '2027-01-31T10:00:00.000Z'],
    ['2027-01-31', '2027-01-31T00:00:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59Z', '2000-02-29T23:59:59.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(new Date(parseTimestamp(text)!).toISOString()).toBe(iso);
  });

  it.each([
    ['a day past the month', '2027-02-30'],
    ['February 29 of a common year', '2027-02-29'],
    ['1900, not a leap year', '1900-02-29T00:00:00Z'],
    ['month 13', '2027-13-01T00:00:00Z'],
    ['month 0', '2027-00-10'],
    ['day 0', '2027-01-00'],
    ['hour 24', '2027-01-01T24:00:00Z'],
    ['minute 60', '2027-01-01T00:60:00Z'],
    ['a leap second', '2027-12-31T23:59:60Z'],
    ['an offset of 24 hours', '2027-01-01T00:00:00+24:00'],
    ['no zone', '2027-01-01T00:00:00'],
    ['an hour alone', '2027-01-01T00Z'],
    ['a fraction without seconds', '2027-01-01T00:00.5Z'],
    ['a space for T', '2027-01-01 00:00:00Z'],
    ['a year alone', '2027'],
    ['an expanded year', '+275760-09-13T00:00:00Z'],
    ['a Unix time', '1800000000'],
    ['English', 'next tuesday'],
    ['an empty string', ''],
  ])('refuses %s (%s)', (_what, text) => {
    expect(parseTimestamp(text)).toBeNull();
  });
});
