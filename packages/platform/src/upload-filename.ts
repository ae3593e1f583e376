import { InputError } from './errors';

/**
 * The longest name of an uploaded file the gateway keeps or passes on, in characters: what most file systems
 * take. A longer one is refused, never cut.
 */
export const MAX_UPLOAD_FILENAME_CHARS = 255;

/** A 400 naming `param` when an uploaded file's name is longer than MAX_UPLOAD_FILENAME_CHARS. */
export function checkUploadFilename(filename: string, param: string): void {
  if (filename.length > MAX_UPLOAD_FILENAME_CHARS) {
    throw new InputError(`The name of ${param} is longer than ${MAX_UPLOAD_FILENAME_CHARS} characters`, param, 'invalid_value');
  }
}
