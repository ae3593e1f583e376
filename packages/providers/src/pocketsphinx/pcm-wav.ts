import { wavOf } from '@gw/provider-spec';

/** Mono 16-bit samples at a rate. */
export interface Pcm {
  samples: Int16Array;
  rate: number;
}

/** The samples of a 16-bit PCM WAV (channels averaged to mono), or null for anything else. */
export function readPcmWav(bytes: Buffer): Pcm | null {
  if (bytes.length < 12 || bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') return null;
  let offset = 12;
  let fmt: { format: number; channels: number; rate: number; bits: number } | null = null;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= bytes.length) {
      fmt = { format: bytes.readUInt16LE(body), channels: bytes.readUInt16LE(body + 2), rate: bytes.readUInt32LE(body + 4), bits: bytes.readUInt16LE(body + 14) };
    }
    if (id === 'data') {
      if (!fmt || fmt.format !== 1 || fmt.bits !== 16 || fmt.channels < 1 || fmt.rate < 1) return null;
      // Streamed WAVs carry no final size: take the bytes that are there.
      const end = size === 0 || size === 0xffffffff || body + size > bytes.length ? bytes.length : body + size;
      const frames = Math.floor((end - body) / (2 * fmt.channels));
      const samples = new Int16Array(frames);
      for (let f = 0; f < frames; f++) {
        let sum = 0;
        for (let c = 0; c < fmt.channels; c++) sum += bytes.readInt16LE(body + (f * fmt.channels + c) * 2);
        samples[f] = Math.round(sum / fmt.channels);
      }
      return { samples, rate: fmt.rate };
    }
    offset = body + size + (size % 2);
  }
  return null;
}

/** Linear-interpolation resampling: enough for speech recognition, which looks at bands far below either rate. */
export function resampleTo(pcm: Pcm, rate: number): Pcm {
  if (pcm.rate === rate) return pcm;
  const length = Math.floor((pcm.samples.length * rate) / pcm.rate);
  const out = new Int16Array(length);
  const step = pcm.rate / rate;
  for (let i = 0; i < length; i++) {
    const at = i * step;
    const a = Math.floor(at);
    const b = Math.min(a + 1, pcm.samples.length - 1);
    out[i] = Math.round(pcm.samples[a] + (pcm.samples[b] - pcm.samples[a]) * (at - a));
  }
  return { samples: out, rate };
}

/** A mono 16-bit WAV of `pcm`. */
export function wavOfPcm(pcm: Pcm): Buffer {
  return wavOf(Buffer.from(pcm.samples.buffer, pcm.samples.byteOffset, pcm.samples.byteLength), pcm.rate);
}
