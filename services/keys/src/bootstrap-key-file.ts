import { chmod, mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '@gw/platform';

/**
 * How a standalone keys service shows a bootstrap secret: its stdout and logs are shared and shipped, so the
 * line goes to a file only the service's user can read, and the logs say only where it is.
 */
export function writeToOwnerOnlyFile(file: string, logger: Logger): (line: string) => Promise<void> {
  return async (line) => {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const handle = await open(file, 'a', 0o600);
    try {
      // A file that already existed (or a umask) must not leave it wider than owner-only.
      await chmod(file, 0o600);
      await handle.appendFile(`${line}\n`);
    } finally {
      await handle.close();
    }
    logger.warn({ file }, 'bootstrap management key written to an owner-only file: read it there and store it');
  };
}
