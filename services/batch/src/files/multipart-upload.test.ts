import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore, type BlobStore } from '@gw/blobs';
import { toGatewayError } from '@gw/platform';
import { receiveUpload } from './multipart-upload';

const LIMITS = { maxBytes: 1024 * 1024, maxLines: 10_000 };

/** Sends the head of a multipart upload and some of its file, then leaves without ending the body. */
function leaveMidUpload(port: number): Promise<void> {
  const body = '--cut\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
    + '--cut\r\nContent-Disposition: form-data; name="file"; filename="in.jsonl"\r\n\r\n' + '{"custom_id":"a"}\n'.repeat(100);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST /v1/files HTTP/1.1\r\nhost: x\r\ncontent-type: multipart/form-data; boundary=cut\r\ncontent-length: ${body.length + 1000}\r\n\r\n${body}`);
      setTimeout(() => { socket.destroy(); resolve(); }, 50);
    });
    socket.on('error', reject);
  });
}

describe('receiveUpload', () => {
  let dir: string;
  let blobs: BlobStore;
  let server: Server;
  let outcomes: string[];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-upload-'));
    blobs = createFsBlobStore(dir);
    outcomes = [];
    server = createServer((req, res) => {
      receiveUpload(req, blobs, 'files/one', LIMITS, new Set(['purpose'])).then(
        () => { outcomes.push('stored'); res.end(); },
        (err: unknown) => { outcomes.push(toGatewayError(err).code); res.statusCode = toGatewayError(err).status; res.end(); },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await blobs.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Before, the form never ended: the upload waited forever with its file open, and its temporary file stayed.
  it('a client that leaves in the middle of its file: the upload ends, and nothing is left on disk', async () => {
    await leaveMidUpload((server.address() as AddressInfo).port);
    const deadline = Date.now() + 5_000;
    while (outcomes.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(outcomes).toEqual(['invalid_multipart']);
    expect(readdirSync(join(dir, '.incoming'))).toEqual([]);
    expect(await blobs.list('files/')).toEqual([]);
  });
});
