import express, { Router } from 'express';
import * as path from 'node:path';

/** Where the console is served; the edge forwards this prefix here and the build's asset URLs start with it. */
export const CONSOLE_PREFIX = '/console';

/**
 * The browser reads only files of this origin: the console calls the API on the same edge, so nothing else
 * (scripts, frames, connections elsewhere) is needed, and a page that embeds the console is refused.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The built files under `/console/`; any other path there answers the app's page, whose router shows the page
 * the path names. Hashed assets are cached for a year, the page itself never (a new build is picked up at once).
 */
export function consoleRoutes(staticDir: string): Router {
  const router = Router();
  router.use(CONSOLE_PREFIX, (_req, res, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    next();
  });
  router.use(`${CONSOLE_PREFIX}/assets`, express.static(path.join(staticDir, 'assets'), { immutable: true, maxAge: '365d', fallthrough: false }));
  router.get([CONSOLE_PREFIX, `${CONSOLE_PREFIX}/{*page}`], (_req, res) => {
    res.setHeader('cache-control', 'no-cache');
    // Relative to its folder: `send` refuses an absolute path with a dot-folder in it (the compiled gateway's .cache/).
    res.sendFile('index.html', { root: staticDir });
  });
  return router;
}
