import { OutboundRequestError, type GuardedHttpClient } from '@gw/net-guard';
import { InputError, PayloadTooLargeError } from '@gw/platform';
import type { AudioInput } from '@gw/provider-spec';
import type { FormFile } from '../multipart-form';
import { audioFormatOf, sniffAudio } from './audio-media';

/**
 * The audio of a transcription, from exactly one of: a multipart `file`, a `file_url` (fetched through the
 * address guard: internal addresses, redirects to them and bodies over the limit are refused), or inline
 * `audio_data` (base64, or a `data:` URL). `mime_type` is required with `file_url` and must match the media;
 * whatever its source, audio whose bytes are not the type it claims is refused.
 */
export class AudioSources {
  constructor(private readonly client: GuardedHttpClient, private readonly limits: { maxBytes: number; timeoutMs: number }) {}

  async resolve(body: Record<string, unknown>, file: FormFile | undefined): Promise<AudioInput> {
    const given = [file ? 'file' : null, body.file_url !== undefined ? 'file_url' : null, body.audio_data !== undefined ? 'audio_data' : null].filter(Boolean);
    if (given.length === 0) throw new InputError('Give the audio as file, file_url or audio_data', 'file', 'missing_required_parameter');
    if (given.length > 1) throw new InputError(`Give exactly one of file, file_url and audio_data (got ${given.join(', ')})`, given[1], 'invalid_request');
    const declared = typeof body.mime_type === 'string' ? body.mime_type.toLowerCase() : undefined;
    if (declared !== undefined && audioFormatOf(declared) === undefined) throw new InputError(`mime_type ${declared} is not an audio type the gateway takes`, 'mime_type', 'invalid_value');
    if (file) return this.checked(file.bytes, declared ?? file.mimeType.toLowerCase(), declared ? 'mime_type' : 'file', file.filename);
    if (body.file_url !== undefined) {
      if (declared === undefined) throw new InputError('mime_type is required with file_url', 'mime_type', 'missing_required_parameter');
      const fetched = await this.fetch(body.file_url as string);
      const served = (fetched.contentType ?? '').split(';')[0].trim().toLowerCase();
      if (served && served !== 'application/octet-stream' && audioFormatOf(served) !== audioFormatOf(declared)) {
        throw new InputError(`mime_type ${declared} does not match the media at file_url (served as ${served})`, 'mime_type', 'mime_type_mismatch');
      }
      return this.checked(fetched.body, declared, 'mime_type', fileName(body.file_url as string));
    }
    const inline = /^data:([^;,]+);base64,(.*)$/s.exec(body.audio_data as string);
    const type = declared ?? inline?.[1].toLowerCase();
    if (!type) throw new InputError('mime_type is required with audio_data (or give a data: URL)', 'mime_type', 'missing_required_parameter');
    const text = (inline ? inline[2] : (body.audio_data as string)).replace(/\s/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length === 0) throw new InputError('audio_data must be base64', 'audio_data', 'invalid_value');
    if (text.length * 0.75 > this.limits.maxBytes) throw new PayloadTooLargeError(`audio_data is larger than ${this.limits.maxBytes} bytes`);
    return this.checked(Buffer.from(text, 'base64'), type, declared ? 'mime_type' : 'audio_data', 'audio');
  }

  private async fetch(url: string) {
    try {
      const fetched = await this.client.fetch(url, { timeoutMs: this.limits.timeoutMs, param: 'file_url', maxBytes: this.limits.maxBytes });
      if (fetched.status !== 200) throw new InputError(`file_url could not be fetched: HTTP ${fetched.status}`, 'file_url', 'fetch_failed');
      return fetched;
    } catch (err) {
      if (!(err instanceof OutboundRequestError)) throw err;
      if (err.kind === 'too_large') throw new PayloadTooLargeError(`The media at file_url is larger than ${this.limits.maxBytes} bytes`);
      throw new InputError(`file_url could not be fetched: ${err.message}`, 'file_url', 'fetch_failed');
    }
  }

  private checked(bytes: Buffer, declaredType: string, param: string, filename: string): AudioInput {
    // An upload with no real type (curl's default, many SDKs') is taken for what its bytes are.
    const generic = declaredType === '' || declaredType === 'application/octet-stream';
    const mimeType = generic ? CANONICAL_TYPE[sniffAudio(bytes) ?? ''] ?? declaredType : declaredType;
    const expected = audioFormatOf(mimeType);
    if (!expected) throw new InputError(`${param}: ${mimeType || 'no type'} is not an audio type the gateway takes`, param, 'invalid_value');
    if (bytes.length > this.limits.maxBytes) throw new PayloadTooLargeError(`The audio is larger than ${this.limits.maxBytes} bytes`);
    const actual = sniffAudio(bytes);
    if (actual !== expected) throw new InputError(`The audio is not ${mimeType} (its bytes are ${actual ?? 'no audio type the gateway takes'})`, param, 'mime_type_mismatch');
    const name = filename.includes('.') ? filename : `${filename}.${expected === 'mp4' ? 'm4a' : expected}`;
    return { bytes, mimeType, filename: name };
  }
}

const CANONICAL_TYPE: Record<string, string> = {
  wav: 'audio/wav', mp3: 'audio/mpeg', ogg: 'audio/ogg', flac: 'audio/flac', webm: 'audio/webm', mp4: 'audio/mp4',
};

function fileName(url: string): string {
  try {
    return new URL(url).pathname.split('/').pop() || 'audio';
  } catch {
    return 'audio';
  }
}
