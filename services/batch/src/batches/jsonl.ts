import type { Readable } from 'node:stream';

export interface JsonlLine {
  /** 1-based line number in the file. */
  line: number;
  /** The line's text without its newline; null when it is longer than the limit (its bytes were dropped). */
  text: string | null;
}

/**
 * The lines of a JSONL stream, one at a time, never holding more than one line (up to `maxLineBytes`) in
 * memory: a longer line is reported with `text: null` instead of being buffered. Blank lines are skipped.
 */
export async function* jsonlLines(source: Readable, maxLineBytes: number): AsyncGenerator<JsonlLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let line = 0;
  const append = (piece: Buffer) => {
    if (piece.length === 0 || tooLong) return;
    if (size + piece.length > maxLineBytes) {
      tooLong = true;
      parts = [];
      size = 0;
      return;
    }
    parts.push(piece);
    size += piece.length;
  };
  const finish = (): JsonlLine | null => {
    line++;
    const text = tooLong ? null : Buffer.concat(parts, size).toString('utf8').replace(/\r$/, '');
    const wasTooLong = tooLong;
    parts = [];
    size = 0;
    tooLong = false;
    if (!wasTooLong && text !== null && text.trim() === '') return null;
    return { line, text };
  };
  for await (const chunk of source as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      append(chunk.subarray(start, nl));
      const done = finish();
      if (done) yield done;
      start = nl + 1;
    }
    append(chunk.subarray(start));
  }
  if (size > 0 || tooLong) {
    const done = finish();
    if (done) yield done;
  }
}
