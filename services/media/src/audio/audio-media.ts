import { wavDurationSeconds } from '@gw/provider-spec';

/** Audio types a transcription takes, by MIME type, each with how to recognise its bytes. */
const SIGNATURES: Record<string, (b: Buffer) => boolean> = {
  wav: (b) => b.toString('ascii', 0, 4) === 'RIFF' && b.toString('ascii', 8, 12) === 'WAVE',
  mp3: (b) => b.toString('ascii', 0, 3) === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0),
  ogg: (b) => b.toString('ascii', 0, 4) === 'OggS',
  flac: (b) => b.toString('ascii', 0, 4) === 'fLaC',
  webm: (b) => b.readUInt32BE(0) === 0x1a45dfa3,
  mp4: (b) => b.toString('ascii', 4, 8) === 'ftyp',
};

const AUDIO_MIME_TYPES: Record<string, keyof typeof SIGNATURES> = {
  'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav', 'audio/vnd.wave': 'wav',
  'audio/mpeg': 'mp3', 'audio/mp3': 'mp3', 'audio/mpga': 'mp3',
  'audio/ogg': 'ogg', 'audio/opus': 'ogg', 'audio/flac': 'flac', 'audio/x-flac': 'flac', 'audio/webm': 'webm',
  'audio/mp4': 'mp4', 'audio/m4a': 'mp4', 'audio/x-m4a': 'mp4', 'video/mp4': 'mp4',
};

/** The container a media type names, or undefined when it is none the gateway takes (the table's own entries only). */
export function audioFormatOf(mimeType: string): string | undefined {
  return Object.hasOwn(AUDIO_MIME_TYPES, mimeType) ? AUDIO_MIME_TYPES[mimeType] : undefined;
}

/** The container the bytes actually are, or null when none of the accepted ones. */
export function sniffAudio(bytes: Buffer): string | null {
  if (bytes.length < 12) return null;
  for (const [format, test] of Object.entries(SIGNATURES)) if (test(bytes)) return format;
  return null;
}

/** Seconds of a WAV (from its header); null for other containers, whose length the provider reports. */
export function audioSeconds(bytes: Buffer): number | null {
  return wavDurationSeconds(bytes);
}

/** A conservative bound on seconds for audio whose length is unknown: 8 kbit/s, below any speech codec in use. */
export function worstCaseSeconds(bytes: Buffer): number {
  return audioSeconds(bytes) ?? Math.ceil(bytes.length / 1000);
}
