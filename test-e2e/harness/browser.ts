import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (installed by scripts/system-packages.sh); playwright-core downloads no browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Headless, offline, and nothing of a profile's background work (sync, updates, first-run pages).
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export const chromiumAvailable = () => existsSync(CHROMIUM_PATH);

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium on a fresh user-data dir, removed on close. */
export async function launchChromium(): Promise<Browser> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'gw-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
