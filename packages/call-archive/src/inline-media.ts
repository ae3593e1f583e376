/**
 * What the archive keeps of media inside a body: never the bytes. A binary value (a Buffer), a base64 data URL
 * and any long run of base64 text (an image's `b64_json`, a transcription's `audio_data`, a chat message's
 * inline image) are replaced by a description of what was there, so one image does not fill a record's byte
 * bound and push the rest of the body out of it. Media the gateway stored itself is named by its record id in
 * the body beside the description (an image's `id`, a video's id).
 */
export interface OmittedMedia {
  omitted: 'base64' | 'binary';
  /** From the data URL, else recognised from the first bytes; absent when neither says. */
  content_type?: string;
  /** Size of the media itself (decoded). */
  bytes: number;
}

/** Shorter base64-looking text is left alone: ids, hashes and short tokens are not media. */
const MIN_BASE64_CHARS = 256;
/** Fields the wire formats carry base64 media in; elsewhere base64 text counts as media when its first bytes say so. */
const BASE64_FIELDS = new Set(['b64_json', 'b64', 'audio_data', 'image_data', 'video_data', 'data', 'partial_image_b64', 'bytesBase64Encoded']);
const BASE64_TEXT = /^[A-Za-z0-9+/_-]+={0,2}$/;
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,/i;

/** Magic numbers of the media formats the gateway handles (images, audio, video). */
const SIGNATURES: [string, (b: Buffer) => boolean][] = [
  ['image/png', (b) => b.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]))],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.toString('latin1', 0, 4) === 'GIF8'],
  ['image/webp', (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP'],
  ['audio/wav', (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WAVE'],
  ['audio/mpeg', (b) => b.toString('latin1', 0, 3) === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0)],
  ['audio/ogg', (b) => b.toString('latin1', 0, 4) === 'OggS'],
  ['audio/flac', (b) => b.toString('latin1', 0, 4) === 'fLaC'],
  ['video/mp4', (b) => b.toString('latin1', 4, 8) === 'ftyp'],
];

function sniff(head: Buffer): string | undefined {
  return SIGNATURES.find(([, matches]) => head.length >= 4 && matches(head))?.[0];
}

function describeBase64(b64: string, contentType: string | undefined): OmittedMedia {
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  const type = contentType ?? sniff(Buffer.from(b64.slice(0, 24), 'base64'));
  return { omitted: 'base64', ...(type ? { content_type: type } : {}), bytes: Math.max(0, Math.floor((b64.length * 3) / 4) - padding) };
}

/** The text, or what it holds when that is media (`key` is the field it is in). */
export function describeString(text: string, key: string): string | OmittedMedia {
  if (text.length < MIN_BASE64_CHARS) return text;
  const dataUrl = DATA_URL.exec(text);
  if (dataUrl) return describeBase64(text.slice(dataUrl[0].length), dataUrl[1]?.toLowerCase());
  if (!BASE64_TEXT.test(text)) return text;
  const described = describeBase64(text, undefined);
  return BASE64_FIELDS.has(key) || described.content_type ? described : text;
}

/** Bytes (a Buffer or any Uint8Array) as what they are, never kept. */
export function describeBinary(value: Uint8Array): OmittedMedia {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const type = sniff(bytes.subarray(0, 16));
  return { omitted: 'binary', ...(type ? { content_type: type } : {}), bytes: bytes.length };
}
