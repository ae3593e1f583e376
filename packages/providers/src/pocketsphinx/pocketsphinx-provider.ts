import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError, UnavailableError, UpstreamError } from '@gw/platform';
import { markRetryable, type MediaCapabilities, type MediaProvider, type MediaTarget, type Transcription, type TranscriptionRequest, type TranscriptionSegment } from '@gw/provider-spec';
import { readPcmWav, resampleTo, wavOfPcm } from './pcm-wav';

export const POCKETSPHINX_CAPABILITIES: MediaCapabilities = {
  imageGeneration: [], imageEdit: [], imageStream: false,
  transcription: ['language', 'response_format'],
  transcriptionFormats: ['json', 'text', 'verbose_json'],
  speech: [], speechFormats: [], native: [],
};

/** The rate of the acoustic model of Debian's pocketsphinx-en-us. */
const MODEL_RATE = 16_000;
const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) ([\d.]+)$/;
/** Markers pocketsphinx puts between words: not speech. */
const NOT_WORDS = new Set(['<s>', '</s>', '<sil>', '[SPEECH]', '[NOISE]']);

/**
 * Speech recognized on this machine by CMU pocketsphinx (Debian's `pocketsphinx` and `pocketsphinx-en-us`): a
 * real offline recognizer for US English, of modest accuracy (it was trained on human speech; synthetic voices
 * come back only partly right). Reads PCM WAV, which it gets at 16 kHz mono, resampled here.
 */
export class PocketsphinxProvider implements MediaProvider {
  readonly kind = 'pocketsphinx';
  readonly capabilities = POCKETSPHINX_CAPABILITIES;

  constructor(private readonly command = 'pocketsphinx_continuous') {}

  async transcribe(req: TranscriptionRequest, target: MediaTarget, signal?: AbortSignal): Promise<Transcription> {
    const language = req.params.language;
    if (language !== undefined && language !== 'en') throw markRetryable(new InputError('The local recognizer knows English only (language en)', 'language', 'unsupported_value'), false);
    const pcm = readPcmWav(req.audio.bytes);
    if (!pcm) throw markRetryable(new InputError('The local recognizer reads 16-bit PCM WAV audio only', 'file', 'unsupported_audio'), false);
    const dir = await mkdtemp(join(tmpdir(), 'gw-pocketsphinx-'));
    try {
      const file = join(dir, 'audio.wav');
      await writeFile(file, wavOfPcm(resampleTo(pcm, MODEL_RATE)));
      const output = await this.run(['-infile', file, '-time', 'yes', '-logfn', '/dev/null'], target.timeoutMs, signal);
      const segments = parse(output);
      const duration = Math.round((pcm.samples.length / pcm.rate) * 1000) / 1000;
      return {
        text: segments.map((s) => s.text).join(' '), language: 'en', duration, segments,
        usage: { audio_duration_seconds: duration }, servedModel: 'pocketsphinx-en-us', providerResponseId: `pocketsphinx-${Date.now()}`,
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private run(args: string[], timeoutMs: number, signal?: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, signal });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => { out += d.toString('utf8'); });
      child.stderr.on('data', (d: Buffer) => { err = (err + d.toString('utf8')).slice(-1000); });
      child.once('error', (e: NodeJS.ErrnoException) => reject(e.code === 'ENOENT'
        ? markRetryable(new UnavailableError('The local recognizer (pocketsphinx) is not installed on this machine'), false)
        : markRetryable(new UpstreamError(`The local recognizer failed: ${e.message}`), false)));
      child.once('close', (code) => (code === 0 ? resolve(out) : reject(markRetryable(new UpstreamError(`The local recognizer failed (exit ${code}): ${err.trim()}`), false))));
    });
  }
}

/** `-time yes` output: each utterance's hypothesis line, then one line per word with its start and end. */
function parse(output: string): TranscriptionSegment[] {
  const segments: TranscriptionSegment[] = [];
  let words: { word: string; start: number; end: number }[] = [];
  const flush = () => {
    if (words.length > 0) segments.push({ id: segments.length, start: words[0].start, end: words.at(-1)!.end, text: words.map((w) => w.word).join(' ') });
    words = [];
  };
  for (const line of output.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const m = WORD_LINE.exec(line);
    if (!m) {
      flush();
      continue;
    }
    if (NOT_WORDS.has(m[1])) continue;
    words.push({ word: m[1].replace(/\(\d+\)$/, ''), start: Number(m[2]), end: Number(m[3]) });
  }
  flush();
  return segments;
}
