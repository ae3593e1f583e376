import { newId, newRequestId, newTraceId, randomText } from './ids';

describe('ids from the pooled random source', () => {
  it('never repeat across many pool refills, and keep their formats', () => {
    const seen = new Set<string>();
    // 16 bytes each: 2,000 ids span about eight refills of the 4 KiB pool.
    for (let i = 0; i < 2_000; i++) {
      const trace = newTraceId();
      expect(trace).toMatch(/^[0-9a-f]{32}$/);
      seen.add(trace);
    }
    expect(seen.size).toBe(2_000);
    expect(randomText(16, 'base64url')).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(newId('chatjob_')).toMatch(/^chatjob_[0-9a-f]{24}$/);
    expect(newRequestId()).toMatch(/^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('refuses more than the pool holds rather than repeat bytes', () => {
    expect(() => randomText(4097, 'hex')).toThrow(RangeError);
  });
});
