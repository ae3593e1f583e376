import type { IncomingMessage } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { BlobTooLargeError, type BlobInfo, type BlobStore } from '@gw/blobs';
import { checkUploadFilename, InputError, isMultipartForm, UnsupportedMediaTypeError, pipeRequestInto, unknownParameterError } from '@gw/platform';

export interface UploadLimits {
  maxBytes: number;
  maxLines: number;
}

export interface ReceivedUpload {
  filename: string;
  /** The form's text fields, each of the names the caller takes, given once. */
  fields: Record<string, string>;
  blob: BlobInfo;
  lines: number;
}

/** Counts lines (a last line without a newline counts) and fails once there are more than `maxLines`. */
class LineCounter extends Transform {
  lines = 0;
  private last = 0x0a;

  constructor(private readonly maxLines: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) this.lines++;
    if (chunk.length > 0) this.last = chunk[chunk.length - 1];
    if (this.lines > this.maxLines) return done(this.tooMany());
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.last !== 0x0a) this.lines++;
    done(this.lines > this.maxLines ? this.tooMany() : null);
  }

  private tooMany() {
    return new InputError(`The file has more than ${this.maxLines} lines`, 'file', 'too_many_lines');
  }
}

/**
 * Streams the `file` part of a multipart/form-data request into the blob `key` (busboy parses the form;
 * the bytes are never held whole), enforcing the size and line limits while they arrive. Text fields named in
 * `textFields` are returned for the caller to check; another name, or one given twice, is a 400 naming it. On a
 * refusal nothing is kept under `key` and the rest of the body is drained, so the answer reaches the client.
 */
export function receiveUpload(req: IncomingMessage, blobs: BlobStore, key: string, limits: UploadLimits, textFields: ReadonlySet<string>): Promise<ReceivedUpload> {
  if (!isMultipartForm(req)) {
    return Promise.reject(new UnsupportedMediaTypeError('Upload files as multipart/form-data with a "file" part', 'file'));
  }
  return new Promise<ReceivedUpload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 16, fieldSize: 4096, parts: 32 } });
    } catch {
      reject(new InputError('The multipart body has no boundary', 'file', 'invalid_multipart'));
      return;
    }
    const fields: Record<string, string> = {};
    let upload: Promise<{ blob: BlobInfo; lines: number; filename: string }> | null = null;
    let failure: unknown = null;
    const fail = (err: unknown) => { failure ??= err; };

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated) fail(new InputError(`The form field ${name} is too long`, name));
      else if (!textFields.has(name)) fail(unknownParameterError(name));
      else if (Object.hasOwn(fields, name)) fail(new InputError(`${name} must be given once`, name));
      else fields[name] = value;
    });
    parser.on('file', (name, stream: Readable, info) => {
      if (name !== 'file' || upload) {
        fail(new InputError(`Unexpected file part "${name}": send one part named "file"`, name === 'file' ? 'file' : name));
        stream.resume();
        return;
      }
      try {
        checkUploadFilename(info.filename ?? '', 'file');
      } catch (err) {
        fail(err);
        stream.resume();
        return;
      }
      const counter = new LineCounter(limits.maxLines);
      // Its refusal reaches the caller through the put below; this keeps a late one from being unhandled.
      counter.on('error', () => undefined);
      // A form cut short inside the file fails the file (the parser's 'error' below answers it): the put must fail
      // too, so it keeps nothing and settles. Without a listener the file's error would end the process.
      stream.on('error', (err) => counter.destroy(err));
      stream.pipe(counter);
      upload = blobs.put(key, counter, { maxBytes: limits.maxBytes }).then(
        (blob) => ({ blob, lines: counter.lines, filename: info.filename || 'upload.jsonl' }),
        (err: unknown) => {
          // Keep reading (and dropping) the rest, so the form ends and the refusal can be answered.
          stream.unpipe(counter);
          stream.resume();
          throw err instanceof BlobTooLargeError ? new InputError(`The file exceeds ${limits.maxBytes} bytes`, 'file', 'file_too_large') : err;
        },
      );
      upload.catch(() => undefined);
    });
    parser.on('filesLimit', () => fail(new InputError('Send one file per upload', 'file')));
    parser.on('fieldsLimit', () => fail(new InputError('Too many form fields', 'purpose')));
    parser.on('partsLimit', () => fail(new InputError('Too many form parts', 'file')));
    parser.on('error', () => {
      req.unpipe(parser);
      req.resume();
      fail(new InputError('The multipart body is malformed', 'file', 'invalid_multipart'));
      settle();
    });
    parser.on('close', () => settle());

    let settled = false;
    async function settle() {
      if (settled) return;
      settled = true;
      const result = upload ? await upload.then((r) => r, (err: unknown) => { fail(err); return null; }) : null;
      if (failure || !result) {
        if (result) await blobs.delete(key).catch(() => undefined);
        reject(failure ?? new InputError('The form has no "file" part', 'file'));
        return;
      }
      resolve({ ...result, fields });
    }
    // A client that leaves before its body ended fails the parser: the form settles, keeping nothing.
    pipeRequestInto(req, parser);
  });
}
