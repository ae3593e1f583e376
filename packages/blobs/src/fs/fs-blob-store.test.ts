import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from './fs-blob-store';

describe('fs blob store', () => {
  let root: string;
  beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'gw-fs-blobs-')); });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  // Before, a put cut short by a killed process left its temporary file for good.
  it('removes the temporary files a killed process left, and none a put may still be writing', async () => {
    const incoming = join(root, '.incoming');
    mkdirSync(incoming);
    writeFileSync(join(incoming, 'left-by-a-crash'), 'partial');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
    utimesSync(join(incoming, 'left-by-a-crash'), twoHoursAgo, twoHoursAgo);
    writeFileSync(join(incoming, 'being-written'), 'partial');

    const store = createFsBlobStore(root);
    await store.close();
    expect(readdirSync(incoming)).toEqual(['being-written']);
  });
});
