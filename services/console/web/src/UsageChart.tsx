import type { UsageRow } from './api';
import { dateTime, toMs } from './format';

export type Metric = 'charged_cost' | 'requests' | 'tokens';

const COLORS = ['#3867d6', '#20bf6b', '#f7b731', '#eb3b5a', '#8854d0', '#0fb9b1', '#fa8231', '#4b6584'];
const WIDTH = 720;
const HEIGHT = 240;
const PAD = { left: 56, right: 8, top: 8, bottom: 28 };

const valueOf = (row: UsageRow, metric: Metric) =>
  metric === 'charged_cost' ? Number(row.charged_cost) : metric === 'requests' ? row.requests : tokensOf(row);

/** Every token of the row: its total when the API gives one, else the kinds added up. */
export const tokensOf = (row: UsageRow) =>
  row.total_tokens ?? row.prompt_tokens + row.completion_tokens + (row.input_tokens ?? 0) + (row.output_tokens ?? 0);

/** The period the chart spans: bars sit at their time within it, so a quiet stretch shows as a gap. */
export interface ChartWindow { fromMs: number; toMs: number; stepMs: number }

/**
 * Stacked bars over time, one colour per group (model or key). Drawn as plain SVG: a few hundred rects need no
 * charting library; the table beside it carries the same figures for screen readers.
 */
export function UsageChart({ rows, groupOf, metric, span: w }: { rows: UsageRow[]; groupOf: (r: UsageRow) => string; metric: Metric; span: ChartWindow }) {
  const buckets = [...new Set(rows.map((r) => toMs(r.start)))].sort((a, b) => a - b);
  const groups = [...new Set(rows.map(groupOf))].sort();
  const totals = new Map<number, number>();
  for (const r of rows) totals.set(toMs(r.start), (totals.get(toMs(r.start)) ?? 0) + valueOf(r, metric));
  const max = Math.max(0, ...totals.values()) || 1;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slotW = plotW / Math.max(1, Math.ceil((w.toMs - w.fromMs) / w.stepMs));
  const barW = Math.max(1, slotW * 0.8);
  const xOf = (startMs: number) => PAD.left + ((startMs - w.fromMs) / w.stepMs) * slotW + (slotW - barW) / 2;
  const label = metric === 'charged_cost' ? 'Charged cost (USD)' : metric === 'requests' ? 'Requests' : 'Tokens';

  return (
    <figure>
      <svg className="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`${label} over time by ${groups.length} groups`}>
        <line x1={PAD.left} y1={PAD.top + plotH} x2={WIDTH - PAD.right} y2={PAD.top + plotH} stroke="#999" />
        <text x={PAD.left - 4} y={PAD.top + 10} textAnchor="end" fontSize="11">{formatValue(max, metric)}</text>
        <text x={PAD.left - 4} y={PAD.top + plotH} textAnchor="end" fontSize="11">0</text>
        {buckets.map((start) => {
          let y = PAD.top + plotH;
          const x = xOf(start);
          return (
            <g key={start}>
              {groups.map((g, gi) => {
                const v = rows.filter((r) => toMs(r.start) === start && groupOf(r) === g).reduce((sum, r) => sum + valueOf(r, metric), 0);
                if (v <= 0) return null;
                const h = (v / max) * plotH;
                y -= h;
                return <rect key={g} x={x} y={y} width={barW} height={h} fill={COLORS[gi % COLORS.length]}><title>{`${g} ${dateTime(start)}: ${formatValue(v, metric)}`}</title></rect>;
              })}
            </g>
          );
        })}
        <text x={PAD.left} y={HEIGHT - 8} fontSize="11">{dateTime(w.fromMs)}</text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 8} fontSize="11" textAnchor="end">{dateTime(w.toMs)}</text>
      </svg>
      <figcaption>
        <ul className="legend" aria-label="Legend">
          {groups.map((g, gi) => <li key={g}><span style={{ background: COLORS[gi % COLORS.length] }} />{g}</li>)}
        </ul>
      </figcaption>
    </figure>
  );
}

const formatValue = (v: number, metric: Metric) => (metric === 'charged_cost' ? `$${v.toFixed(6)}` : String(Math.round(v)));
