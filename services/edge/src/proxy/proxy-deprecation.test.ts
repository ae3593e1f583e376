import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * The proxy the edge forwards with (http-proxy-middleware over http-proxy 1.18.1, patched in patches/) calls no API
 * Node deprecates: a forwarded request in a fresh process under `--throw-deprecation` (a deprecation there is an
 * uncaught exception) reaches its target and exits 0. Unpatched, http-proxy called `util._extend` (DEP0060) on
 * every first forward of a process, the single-process gateway's first billing call among them.
 */
describe('the edge proxy and Node deprecations', () => {
  it('forwards a request without a deprecated call', async () => {
    const script = `
      const http = require('node:http');
      const { createProxyMiddleware } = require(${JSON.stringify(require.resolve('http-proxy-middleware'))});
      const target = http.createServer((req, res) => res.end('target:' + req.url));
      target.listen(0, '127.0.0.1', () => {
        const proxy = createProxyMiddleware({ target: 'http://127.0.0.1:' + target.address().port });
        const edge = http.createServer((req, res) => proxy(req, res, () => { res.statusCode = 404; res.end(); }));
        edge.listen(0, '127.0.0.1', async () => {
          const answer = await (await fetch('http://127.0.0.1:' + edge.address().port + '/v1/billing/balance')).text();
          process.stdout.write(answer);
          edge.close(); target.close();
        });
      });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--throw-deprecation', '-e', script], { timeout: 20_000 });
    expect(stdout).toBe('target:/v1/billing/balance');
  });
});
