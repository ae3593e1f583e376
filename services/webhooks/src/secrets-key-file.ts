import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The single-process mode's WEBHOOK_SECRETS_KEY when none is configured: made once, kept owner-only (0600)
 * beside the data, so signing secrets stay readable across restarts (its identity secret is new each start).
 */
export function readOrCreateSecretsKey(file: string): string {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(48).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readFileSync(file, 'utf8').trim();
}
