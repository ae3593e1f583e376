import { cappedChunks, declaredLengthOf } from './capped-body';

/** A body of `sizes` chunks that records how far it was read. */
function body(sizes: number[]) {
  const read = { chunks: 0, dropped: false };
  const chunks = (async function* () {
    for (const size of sizes) {
      read.chunks += 1;
      yield new Uint8Array(size);
    }
  })();
  return { chunks, read };
}

const tooLarge = () => new Error('too large');

async function collect(iterable: AsyncIterable<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const part of iterable) bytes += part.length;
  return bytes;
}

describe('cappedChunks', () => {
  it('passes a body within the limit, declared or not', async () => {
    for (const declared of ['30', undefined, null, ['30']]) {
      const { chunks, read } = body([10, 10, 10]);
      expect(await collect(cappedChunks(chunks, declared, 30, tooLarge, () => { read.dropped = true; }))).toBe(30);
      expect(read.dropped).toBe(false);
    }
  });

  it('refuses a declared length over the limit before reading a byte', () => {
    const { chunks, read } = body([10]);
    expect(() => cappedChunks(chunks, '31', 30, tooLarge, () => { read.dropped = true; })).toThrow('too large');
    expect(read).toEqual({ chunks: 0, dropped: true });
  });

  it('refuses an undeclared body at the chunk that passes the limit, and reads no further', async () => {
    const { chunks, read } = body([20, 20, 20]);
    await expect(collect(cappedChunks(chunks, undefined, 30, tooLarge, () => { read.dropped = true; }))).rejects.toThrow('too large');
    expect(read).toEqual({ chunks: 2, dropped: true });
  });

  it('counts what arrives even when the declared length lies', async () => {
    const { chunks, read } = body([20, 20]);
    await expect(collect(cappedChunks(chunks, '10', 30, tooLarge, () => { read.dropped = true; }))).rejects.toThrow('too large');
    expect(read.dropped).toBe(true);
  });
});

describe('declaredLengthOf', () => {
  it.each([
    ['123', 123], [['7', '8'], 7], [undefined, NaN], [null, NaN], ['', NaN], ['abc', NaN],
  ] as const)('%j -> %d', (header, expected) => {
    expect(declaredLengthOf(header as string | string[] | null | undefined)).toBe(expected);
  });
});
