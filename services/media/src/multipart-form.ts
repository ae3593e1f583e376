import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { checkUploadFilename, InputError, isMultipartForm, PayloadTooLargeError, UnsupportedMediaTypeError, pipeRequestInto } from '@gw/platform';
import { fieldTypeOf, type FieldType } from './validation/request-fields';

export interface FormFile {
  bytes: Buffer;
  filename: string;
  mimeType: string;
}

/**
 * Parts by name, in objects without a prototype: a part may be named `__proto__` or `constructor`, and is then
 * an own entry like any other (for the routes to refuse as unknown), never an `Object.prototype` member.
 */
export interface ReceivedForm {
  /** Text fields; a repeated name (`timestamp_granularities[]`) keeps every value. */
  fields: Record<string, string | string[]>;
  files: Record<string, FormFile[]>;
}

/** Bounds of a form's text (its files have theirs from the caller): fields, and the bytes of one field's value. */
const MAX_FIELDS = 64;
const MAX_FIELD_BYTES = 64 * 1024;

/**
 * Reads a multipart/form-data request whole (media inputs are bounded: `maxFileBytes` each, `maxFiles` in
 * all). A file past its bound is a 413 naming its field; on any refusal the rest of the body is drained so the
 * answer reaches the client.
 */
export function readForm(req: IncomingMessage, limits: { maxFileBytes: number; maxFiles: number }): Promise<ReceivedForm> {
  if (!isMultipartForm(req)) return Promise.reject(new UnsupportedMediaTypeError('Send this request as multipart/form-data', null));
  return new Promise<ReceivedForm>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: limits.maxFiles, fileSize: limits.maxFileBytes, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
    } catch {
      return reject(new InputError('The multipart body has no boundary', null, 'invalid_multipart'));
    }
    const form: ReceivedForm = { fields: Object.create(null) as ReceivedForm['fields'], files: Object.create(null) as ReceivedForm['files'] };
    let failed: Error | null = null;
    const fail = (err: Error) => {
      failed ??= err;
    };
    // busboy cuts a value past its bound and drops fields past the count: refused here, never read cut or short.
    parser.on('field', (name, value, info) => {
      // (A name is bounded by the part's header, whose overflow is a malformed body.)
      if (info.valueTruncated) {
        fail(new InputError(`The form field ${name} is longer than ${MAX_FIELD_BYTES} bytes`, name, 'field_too_long'));
        return;
      }
      const key = name.endsWith('[]') ? name.slice(0, -2) : name;
      const existing = form.fields[key];
      form.fields[key] = existing === undefined ? (name.endsWith('[]') ? [value] : value) : [...(Array.isArray(existing) ? existing : [existing]), value];
    });
    parser.on('file', (name, stream, info) => {
      const key = name.endsWith('[]') ? name.slice(0, -2) : name;
      try {
        checkUploadFilename(info.filename ?? '', key);
      } catch (err) {
        fail(err as Error);
        stream.resume();
        return;
      }
      const parts: Buffer[] = [];
      // A form cut short inside a file fails the file too; the parser's own 'error' below answers it. Without a
      // listener the file's error would end the process.
      stream.on('error', () => undefined);
      stream.on('data', (d: Buffer) => parts.push(d));
      stream.on('limit', () => fail(new PayloadTooLargeError(`${name} is larger than ${limits.maxFileBytes} bytes`)));
      stream.on('end', () => {
        (form.files[key] ??= []).push({ bytes: Buffer.concat(parts), filename: info.filename || key, mimeType: info.mimeType || 'application/octet-stream' });
      });
    });
    parser.on('filesLimit', () => fail(new InputError(`At most ${limits.maxFiles} files may be sent`, null, 'too_many_files')));
    parser.on('fieldsLimit', () => fail(new InputError(`At most ${MAX_FIELDS} form fields may be sent`, null, 'too_many_fields')));
    parser.on('error', (err: Error) => {
      req.unpipe(parser);
      req.resume();
      reject(failed ?? new InputError(`The multipart body is malformed: ${err.message}`, null, 'invalid_multipart'));
    });
    parser.on('close', () => (failed ? reject(failed) : resolve(form)));
    // A client that leaves before its body ended fails the parser: the form settles, keeping nothing.
    pipeRequestInto(req, parser);
  });
}

/** A form's text fields as a request body, each read as the type `table` gives it (others as strings). */
export function formFields(form: ReceivedForm, table: Readonly<Record<string, FieldType>>): Record<string, unknown> {
  // fromEntries makes each an own entry: an assignment to `body.__proto__` would set the body's prototype instead.
  return Object.fromEntries(Object.entries(form.fields).map(([name, value]) => [name, formValue(value, fieldTypeOf(table, name) ?? 'string')]));
}

/** A text field read as JSON-like input: booleans and numbers the way a form sends them. */
function formValue(value: string | string[], type: string): unknown {
  if (Array.isArray(value)) return value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  if (type === 'integer' || type === 'number') return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  if (type === 'array' || type === 'object') {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  return value;
}
