import { bucketOf, HistogramBuilder } from './latency-histogram';

describe('latency histogram', () => {
  test('percentiles are within 5% of the exact ones', () => {
    const h = new HistogramBuilder();
    for (let ms = 1; ms <= 1000; ms++) h.add(ms);
    expect(Math.abs(h.quantile(0.5)! - 500) / 500).toBeLessThan(0.05);
    expect(Math.abs(h.quantile(0.95)! - 950) / 950).toBeLessThan(0.05);
  });

  test('histograms merge exactly: two halves give the percentiles of the whole', () => {
    const whole = new HistogramBuilder();
    const a = new HistogramBuilder();
    const b = new HistogramBuilder();
    for (let i = 0; i < 500; i++) {
      const ms = (i * 37) % 3000;
      whole.add(ms);
      (i % 2 === 0 ? a : b).add(ms);
    }
    const merged = new HistogramBuilder().merge(a.toJSON()).merge(b.toJSON());
    expect(merged.toJSON()).toEqual(whole.toJSON());
    expect(merged.quantile(0.95)).toBe(whole.quantile(0.95));
  });

  test('no observations: no percentile; sub-millisecond and huge values stay in range', () => {
    expect(new HistogramBuilder().quantile(0.5)).toBeNull();
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(0.4)).toBe(0);
    expect(bucketOf(1e15)).toBe(190);
    expect(new HistogramBuilder().add(0).quantile(0.95)).toBe(0);
  });
});
