import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createLogger } from '@gw/platform';
import { startLocalStack } from './local-stack';

const HOST = '127.0.0.1';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** True when this process can listen on the port again (nothing holds it). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

/** Files left in the data dir by a store that was not closed (SQLite's WAL and shared-memory index). */
function openStoreFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('-wal') || f.endsWith('-shm'));
}

describe('the single-process stack', () => {
  let dataDir: string;
  beforeEach(() => { dataDir = mkdtempSync(path.join(tmpdir(), 'gw-local-stack-')); });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  test('a start that fails (billing refuses its configuration) stops what had started: every port free, every store closed', async () => {
    const names = ['KEYS_HTTP_PORT', 'KEYS_GRPC_PORT', 'INFERENCE_HTTP_PORT', 'INFERENCE_GRPC_PORT', 'BATCH_HTTP_PORT', 'WEBHOOKS_HTTP_PORT',
      'MEDIA_HTTP_PORT', 'CONSOLE_HTTP_PORT', 'BILLING_HTTP_PORT', 'BILLING_GRPC_PORT', 'EDGE_PORT', 'EDGE_ADMIN_PORT'];
    const ports = Object.fromEntries(await Promise.all(names.map(async (name) => [name, String(await freePort())] as const)));
    const env = { ...ports, BIND_HOST: HOST, EDGE_HOST: HOST, USAGE_BATCH_MAX: '0' };
    await expect(startLocalStack({ dataDir, env, logger: createLogger(null, 'silent') })).rejects.toThrow(/USAGE_BATCH_MAX/);
    const held = [];
    for (const name of names) if (!(await canListen(Number(ports[name])))) held.push(name);
    expect(held).toEqual([]);
    expect(openStoreFiles(dataDir)).toEqual([]);
  });

  // Before, the media address made from it was named instead ("MEDIA_PUBLIC_BASE_URL: Invalid URL").
  test('a bad EDGE_PORT is refused by its own name, before anything starts', async () => {
    await expect(startLocalStack({ dataDir, env: { EDGE_PORT: 'abc' }, logger: createLogger(null, 'silent') }))
      .rejects.toThrow(/Invalid configuration: EDGE_PORT/);
    expect(openStoreFiles(dataDir)).toEqual([]);
  });
});
