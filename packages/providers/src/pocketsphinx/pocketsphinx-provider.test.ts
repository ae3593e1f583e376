import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PocketsphinxProvider } from './pocketsphinx-provider';
import { readPcmWav, resampleTo } from './pcm-wav';

const target = { baseUrl: 'local://pocketsphinx', providerModel: 'pocketsphinx-en-us', timeoutMs: 60_000 };

/** Needs pocketsphinx and espeak-ng on the machine (scripts/system-packages.sh installs both with the project). */
describe('PocketsphinxProvider (pocketsphinx on this machine)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-sphinx-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('recognizes words with their times in a spoken WAV (espeak-ng, 22,050 Hz, resampled to 16 kHz)', async () => {
    const file = join(dir, 'digits.wav');
    expect(spawnSync('espeak-ng', ['-v', 'en-us', '-s', '110', '-w', file, 'one two three four five six seven']).status).toBe(0);
    const wav = readFileSync(file);
    const t = await new PocketsphinxProvider().transcribe({ audio: { bytes: wav, filename: 'digits.wav', mimeType: 'audio/wav' }, responseFormat: 'verbose_json', params: {} }, target);
    // A real recognizer: synthetic speech comes back only partly right, but it is words, in order, with times.
    expect(t.text.split(' ')).toContain('three');
    expect(t.segments!.length).toBeGreaterThan(0);
    expect(t.segments![0].start).toBeLessThan(t.segments![0].end);
    expect(t.duration).toBeCloseTo(readPcmWav(wav)!.samples.length / 22_050, 2);
    expect(t.usage).toEqual({ audio_duration_seconds: t.duration });
    // A real recognizer run: seconds of CPU, more while the rest of the suite shares the two cores.
  }, 60_000);

  it('takes 16-bit PCM WAV only, English only', async () => {
    const p = new PocketsphinxProvider();
    await expect(p.transcribe({ audio: { bytes: Buffer.from('ID3abcdefghijkl'), filename: 'a.mp3', mimeType: 'audio/mpeg' }, responseFormat: 'json', params: {} }, target))
      .rejects.toMatchObject({ status: 400, param: 'file' });
    await expect(p.transcribe({ audio: { bytes: Buffer.alloc(64), filename: 'a.wav', mimeType: 'audio/wav' }, responseFormat: 'json', params: { language: 'fr' } }, target))
      .rejects.toMatchObject({ status: 400, param: 'language' });
  });

  it('a machine without the recognizer answers 503', async () => {
    const wav = readFileSync(join(dir, 'digits.wav'));
    await expect(new PocketsphinxProvider('pocketsphinx-not-installed').transcribe({ audio: { bytes: wav, filename: 'a.wav', mimeType: 'audio/wav' }, responseFormat: 'json', params: {} }, target))
      .rejects.toMatchObject({ status: 503 });
  });

  it('resampling keeps the length in time', () => {
    const pcm = { samples: new Int16Array(22_050).map((_, i) => Math.round(Math.sin(i / 10) * 1000)), rate: 22_050 };
    const out = resampleTo(pcm, 16_000);
    expect(out.samples.length).toBe(16_000);
    expect(out.rate).toBe(16_000);
  });
});
