import { deflateSync } from 'node:zlib';

/**
 * Real media bytes for the simulated images and audio APIs: a valid PNG whose colour follows the prompt, and
 * PCM / WAV audio of a tone whose length follows the text, so clients can decode what they get.
 */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A `width` x `height` RGB PNG filled with one colour derived from `seed` (lighter for later partial renders). */
export function samplePng(seed: string, width = 16, height = 16, shade = 0): Buffer {
  const h = crc32(Buffer.from(seed));
  const rgb = [h & 0xff, (h >>> 8) & 0xff, (h >>> 16) & 0xff].map((v) => Math.min(255, v + shade));
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** OpenAI's `pcm` speech format: 24 kHz, 16-bit signed little-endian, mono. */
export const PCM_RATE = 24_000;

/** A 440 Hz tone of `seconds`, as 16-bit PCM at 24 kHz. */
export function tonePcm(seconds: number): Buffer {
  const samples = Math.round(seconds * PCM_RATE);
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / PCM_RATE) * 8000), i * 2);
  return out;
}
