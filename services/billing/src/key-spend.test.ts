import { addSpend, isoWeekLabel, keySpendView, periodLabels, spendAgainstLimit } from './key-spend';

describe('period labels', () => {
  test.each([
    ['2026-01-01T00:00:00Z', '2026-W01'], // Thursday
    ['2027-01-01T12:00:00Z', '2026-W53'], // Friday belongs to the previous ISO year
    ['2024-12-30T00:00:00Z', '2025-W01'], // Monday of the week holding 2025's first Thursday
    ['2026-11-01T23:59:59Z', '2026-W44'], // Sunday closes its week
    ['2026-11-02T00:00:00Z', '2026-W45'],
  ])('%s is in ISO week %s', (iso, week) => {
    expect(isoWeekLabel(new Date(iso))).toBe(week);
  });

  test('day and month are UTC', () => {
    expect(periodLabels(new Date('2026-03-31T23:30:00-02:00'))).toEqual({ day: '2026-04-01', week: '2026-W14', month: '2026-04' });
  });
});

describe('addSpend', () => {
  const mon = periodLabels(new Date('2026-11-02T10:00:00Z'));
  const tue = periodLabels(new Date('2026-11-03T10:00:00Z'));
  const nextMonth = periodLabels(new Date('2026-12-01T10:00:00Z'));

  test('accumulates within a period and restarts counters in a new one', () => {
    let s = addSpend(undefined, 100, mon);
    s = addSpend(s, 50, mon);
    expect(s).toMatchObject({ total_micros: 150, day_micros: 150, week_micros: 150, month_micros: 150 });
    s = addSpend(s, 7, tue);
    expect(s).toMatchObject({ total_micros: 157, day: '2026-11-03', day_micros: 7, week_micros: 157, month_micros: 157 });
    s = addSpend(s, 1, nextMonth);
    expect(s).toMatchObject({ total_micros: 158, day_micros: 1, week_micros: 1, month: '2026-12', month_micros: 1 });
  });

  test('late spend for a closed period counts only in the total', () => {
    const s = addSpend(addSpend(undefined, 10, tue), 5, mon);
    expect(s).toMatchObject({ total_micros: 15, day: '2026-11-03', day_micros: 10, week_micros: 15 });
  });
});

describe('keySpendView and limits', () => {
  const spend = addSpend(undefined, 40, periodLabels(new Date('2026-11-02T10:00:00Z')));

  test('counters from an earlier period read as zero', () => {
    const nextDay = keySpendView('k', spend, new Date('2026-11-03T00:00:01Z'));
    expect(nextDay).toEqual({ key_hash: 'k', total_micros: 40, daily_micros: 0, weekly_micros: 40, monthly_micros: 40 });
    expect(spendAgainstLimit(nextDay, 'daily')).toBe(0);
    expect(spendAgainstLimit(nextDay, 'weekly')).toBe(40);
    expect(spendAgainstLimit(nextDay, null)).toBe(40);
  });

  test('unknown key has no spend', () => {
    expect(keySpendView('k', undefined, new Date())).toEqual({ key_hash: 'k', total_micros: 0, daily_micros: 0, weekly_micros: 0, monthly_micros: 0 });
  });
});
