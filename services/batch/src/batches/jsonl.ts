import type { Readable } from 'node:stream';

/** A line's text without its newline, or why it has none: its bytes were dropped past the limit, or are not UTF-8. */
export type JsonlLine = { line: number; text: string } | { line: number; text: null; unreadable: 'too_large' | 'invalid_utf8' };

/** Strict, so a malformed byte is reported rather than sent on as U+FFFD; the BOM is handled below. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const BYTE_ORDER_MARK = '\uFEFF';

/**
 * The lines of a JSONL stream (1-based `line`), one at a time, never holding more than one line (up to
 * `maxLineBytes`) in memory: a longer line is reported without text instead of being buffered. Blank lines are
 * skipped, and so is a byte order mark at the start of the file.
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
    const bytes = tooLong ? null : Buffer.concat(parts, size);
    parts = [];
    size = 0;
    tooLong = false;
    if (bytes === null) return { line, text: null, unreadable: 'too_large' };
    let text: string;
    try {
      text = utf8.decode(bytes).replace(/\r$/, '');
    } catch {
      return { line, text: null, unreadable: 'invalid_utf8' };
    }
    if (line === 1 && text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1);
    return text.trim() === '' ? null : { line, text };
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
