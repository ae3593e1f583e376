/**
 * Per-key spend with calendar periods (UTC day, ISO week, month). Each period counter carries the label of
 * the period it counts, so a counter from an earlier period reads as zero without any sweeper.
 */
export interface KeySpendDoc {
  total_micros: number;
  day: string;
  day_micros: number;
  week: string;
  week_micros: number;
  month: string;
  month_micros: number;
}

export interface PeriodLabels {
  day: string;
  week: string;
  month: string;
}

export interface KeySpendView {
  key_hash: string;
  total_micros: number;
  daily_micros: number;
  weekly_micros: number;
  monthly_micros: number;
}

export type LimitReset = 'daily' | 'weekly' | 'monthly' | null;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Labels sort lexicographically in time order (`2026-11-02`, `2026-W45`, `2026-11`). */
export function periodLabels(at: Date): PeriodLabels {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth() + 1;
  const d = at.getUTCDate();
  return { day: `${y}-${pad(m)}-${pad(d)}`, week: isoWeekLabel(at), month: `${y}-${pad(m)}` };
}

/** ISO 8601 week: weeks start on Monday; week 1 holds the year's first Thursday. */
export function isoWeekLabel(at: Date): string {
  const date = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  const weekday = date.getUTCDay() || 7;
  date.setUTCDate(date.getUTCDate() + 4 - weekday);
  const weekYear = date.getUTCFullYear();
  const week = Math.ceil(((date.getTime() - Date.UTC(weekYear, 0, 1)) / 86_400_000 + 1) / 7);
  return `${weekYear}-W${pad(week)}`;
}

/**
 * Adds an amount spent in the period `at` falls in. A newer period restarts its counter; spend that arrives
 * late for an already-closed period still counts in the total, but not in the newer period's counter.
 */
export function addSpend(current: KeySpendDoc | undefined, micros: number, labels: PeriodLabels): KeySpendDoc {
  const base: KeySpendDoc = current ?? { total_micros: 0, day: '', day_micros: 0, week: '', week_micros: 0, month: '', month_micros: 0 };
  const roll = (stored: string, storedMicros: number, label: string): [string, number] => {
    if (label === stored) return [stored, storedMicros + micros];
    if (label > stored) return [label, micros];
    return [stored, storedMicros];
  };
  const [day, day_micros] = roll(base.day, base.day_micros, labels.day);
  const [week, week_micros] = roll(base.week, base.week_micros, labels.week);
  const [month, month_micros] = roll(base.month, base.month_micros, labels.month);
  return { total_micros: base.total_micros + micros, day, day_micros, week, week_micros, month, month_micros };
}

/** Spend in the periods containing `now`; counters labelled with an earlier period are zero. */
export function keySpendView(keyHash: string, spend: KeySpendDoc | undefined, now: Date): KeySpendView {
  const labels = periodLabels(now);
  return {
    key_hash: keyHash,
    total_micros: spend?.total_micros ?? 0,
    daily_micros: spend && spend.day === labels.day ? spend.day_micros : 0,
    weekly_micros: spend && spend.week === labels.week ? spend.week_micros : 0,
    monthly_micros: spend && spend.month === labels.month ? spend.month_micros : 0,
  };
}

/** The spend a key limit is compared with: the current period's, or the total when the limit never resets. */
export function spendAgainstLimit(view: KeySpendView, reset: LimitReset): number {
  switch (reset) {
    case 'daily': return view.daily_micros;
    case 'weekly': return view.weekly_micros;
    case 'monthly': return view.monthly_micros;
    default: return view.total_micros;
  }
}
