import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wavDurationSeconds } from '@gw/provider-spec';
import { EspeakSpeechProvider } from './espeak-speech-provider';

const target = { baseUrl: 'local://espeak-ng', providerModel: 'espeak-ng', timeoutMs: 20_000 };

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

/** Needs espeak-ng on the machine (scripts/system-packages.sh installs it with the project). */
describe('EspeakSpeechProvider (espeak-ng on this machine)', () => {
  it('speaks real WAV audio, faster at a higher speed', async () => {
    const text = 'The gateway speaks offline.';
    const normal = await collect((await new EspeakSpeechProvider().speech({ input: text, voice: 'en-us', responseFormat: 'wav', speed: 1, params: {} }, target)).chunks);
    const fast = await collect((await new EspeakSpeechProvider().speech({ input: text, voice: 'en-us', responseFormat: 'wav', speed: 2, params: {} }, target)).chunks);
    expect(normal.toString('ascii', 0, 4)).toBe('RIFF');
    const seconds = (b: Buffer) => (b.length - 44) / b.readUInt32LE(28);
    expect(seconds(normal)).toBeGreaterThan(1);
    expect(seconds(fast)).toBeLessThan(seconds(normal) * 0.75);
    expect(wavDurationSeconds(normal)).not.toBeNull();
  });

  // espeak-ng speaks 80 to 450 words a minute: a speed outside that was clamped to it, unannounced.
  it.each([0.25, 0.45, 2.58, 4])('a speed of %d, past what the engine can do, is a 400 naming speed', async (speed) => {
    const err = await new EspeakSpeechProvider().speech({ input: 'x', voice: 'en-us', responseFormat: 'wav', speed, params: {} }, target).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'speed' });
  });

  it('text is read from stdin: an input that looks like an option is spoken, not obeyed', async () => {
    const audio = await collect((await new EspeakSpeechProvider().speech({ input: '--help', voice: 'en-us', responseFormat: 'wav', speed: 1, params: {} }, target)).chunks);
    expect(audio.toString('ascii', 0, 4)).toBe('RIFF');
  });

  it('a machine without the engine answers 503, not a crash', async () => {
    const err = await new EspeakSpeechProvider('espeak-ng-not-installed').speech({ input: 'x', voice: 'en-us', responseFormat: 'wav', speed: 1, params: {} }, target).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('an unknown voice fails the call with the engine message', async () => {
    const audio = await new EspeakSpeechProvider().speech({ input: 'x', voice: 'xx-nonexistent', responseFormat: 'wav', speed: 1, params: {} }, target);
    await expect(collect(audio.chunks)).rejects.toMatchObject({ status: 502 });
  });

  // Before, the refused write to its stdin (EPIPE) had no listener and ended the process.
  it('an engine that exits without reading its input fails the call, not the process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'espeak-fake-'));
    try {
      const engine = join(dir, 'engine');
      writeFileSync(engine, '#!/bin/sh\nexec 0<&-\nsleep 0.2\nexit 3\n');
      chmodSync(engine, 0o755);
      // More than a pipe's buffer, so the write is still pending when the engine closes its end.
      const input = 'word '.repeat(200_000);
      const audio = await new EspeakSpeechProvider(engine).speech({ input, voice: 'en-us', responseFormat: 'wav', speed: 1, params: {} }, target);
      await expect(collect(audio.chunks)).rejects.toMatchObject({ status: 502, message: expect.stringContaining('exit 3') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
