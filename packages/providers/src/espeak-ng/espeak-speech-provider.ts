import { spawn } from 'node:child_process';
import { markRetryable, type MediaCapabilities, type MediaProvider, type MediaTarget, type SpeechAudio, type SpeechRequest } from '@gw/provider-spec';
import { InputError, UnavailableError, UpstreamError } from '@gw/platform';

export const ESPEAK_CAPABILITIES: MediaCapabilities = {
  imageGeneration: [], imageEdit: [], imageStream: false,
  transcription: [], transcriptionFormats: [],
  speech: ['voice', 'response_format', 'speed'],
  speechFormats: ['wav'],
  native: [],
};

/** espeak-ng's default rate, in words per minute: `speed` 1.0. */
const BASE_WPM = 175;
/** The rates espeak-ng speaks at: `speed` 0.46 to 2.57 (the catalogue's bounds for its model). */
const MIN_WPM = 80;
const MAX_WPM = 450;

/**
 * Speech synthesized on this machine by espeak-ng (a Debian package): a real offline voice for the single-machine
 * gateway. The target's `providerModel` is unused (espeak-ng has one engine); `voice` is an espeak-ng voice name
 * (such as `en-us`), and the audio is 22,050 Hz mono 16-bit WAV, streamed as espeak-ng writes it.
 */
export class EspeakSpeechProvider implements MediaProvider {
  readonly kind = 'espeak-ng';
  readonly capabilities = ESPEAK_CAPABILITIES;

  constructor(private readonly command = 'espeak-ng') {}

  async speech(req: SpeechRequest, target: MediaTarget, signal?: AbortSignal): Promise<SpeechAudio> {
    const wpm = Math.round(BASE_WPM * req.speed);
    if (wpm < MIN_WPM || wpm > MAX_WPM) {
      throw new InputError(`speed must be from ${(MIN_WPM / BASE_WPM).toFixed(2)} to ${(MAX_WPM / BASE_WPM).toFixed(2)} for espeak-ng (${MIN_WPM} to ${MAX_WPM} words a minute)`, 'speed');
    }
    // The text goes on stdin, never on the command line: it cannot be read as an option.
    const child = spawn(this.command, ['--stdout', '-v', req.voice, '-s', String(wpm)], { stdio: ['pipe', 'pipe', 'pipe'], signal, timeout: target.timeoutMs });
    const started = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT'
        ? markRetryable(new UnavailableError('The local speech engine (espeak-ng) is not installed on this machine'), false)
        : markRetryable(new UpstreamError(`The local speech engine failed: ${err.message}`), false)));
    });
    await started;
    // An engine that exits (or is killed) before it read the text refuses the write (EPIPE): its exit code fails
    // the call below. Without a listener that refusal would end the process.
    child.stdin.on('error', () => undefined);
    child.stdin.end(req.input);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString('utf8').slice(0, 1000); });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    return {
      contentType: 'audio/wav',
      providerResponseId: `espeak-${child.pid ?? 0}-${Date.now()}`,
      chunks: (async function* () {
        let bytes = 0;
        for await (const chunk of child.stdout) {
          bytes += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
        const code = await exited;
        if (code !== 0 || bytes === 0) throw markRetryable(new UpstreamError(`The local speech engine failed (exit ${code}): ${stderr.trim() || 'no audio'}`), false);
      })(),
    };
  }
}
