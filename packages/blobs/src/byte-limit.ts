import { Transform, type TransformCallback } from 'node:stream';
import { BlobTooLargeError } from './port';

/** Passes bytes through and fails the stream with `BlobTooLargeError` the moment more than `maxBytes` passed. */
export class ByteLimit extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(new BlobTooLargeError(this.maxBytes));
    done(null, chunk);
  }
}
