/** Plain-text tables and number formatting for the benchmark's printout. */

export const fmt = (v: number | null | undefined, digits = 0): string => (v === null || v === undefined ? '-' : v.toFixed(digits));

export const signed = (v: number | null | undefined, digits = 2): string => (v === null || v === undefined ? '-' : (v >= 0 ? '+' : '') + v.toFixed(digits));

/** A table with its first `leftColumns` columns left-aligned and the rest (numbers) right-aligned. */
export function formatTable(header: string[], rows: string[][], leftColumns = 2): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < leftColumns ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}
