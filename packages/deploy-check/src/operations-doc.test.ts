import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createStore, type Store } from '@gw/store';
import { startKeysService } from '@gw/keys';
import { KeyStore } from '@gw/keys/src/key-store';
import { hashSecret } from '@gw/keys/src/key-secret';
import { deadAddress, KEYS_TEST_SECRET, openEngines, testLogger } from '@gw/keys/src/test-support';
import { freePort } from '../../../test-e2e/harness/ports';
import { componentsWithoutCode } from './chart';
import { ROOT, serviceFolders } from './manifests';
import { OPERATIONS_DOC, PROVIDER_ENV, SERVICE_SCHEMAS, docTables, envProblems, fencedBlock } from './operations-doc';

/**
 * docs/operations.md is the operator's reference: its environment tables must be the config schemas (every
 * variable, each default), and the procedures it gives for a lost management key and a backup must work.
 */

const doc = fs.readFileSync(OPERATIONS_DOC, 'utf8');
const tables = docTables(doc);

describe('the environment variable tables are the config schemas', () => {
  test('every service has a table, and every table a service', () => {
    const present = serviceFolders();
    const problems = [
      ...present.filter((s) => !tables.has(s)).map((s) => `docs/operations.md has no "### ${s}" table under "## Environment variables"`),
      ...present.filter((s) => !SERVICE_SCHEMAS[s]).map((s) => `services/${s} has no entry in SERVICE_SCHEMAS of packages/deploy-check/src/operations-doc.ts`),
      ...[...tables.keys()].filter((t) => !['Every service', 'Provider credentials'].includes(t) && !present.includes(t) && !componentsWithoutCode().includes(t))
        .map((t) => `docs/operations.md documents "${t}", which is no service`),
      ...[...(tables.get('Every service')?.keys() ?? [])].filter((v) => !Object.values(SERVICE_SCHEMAS).some((schema) => v in schema.shape))
        .map((v) => `docs/operations.md lists ${v} under "Every service", but no service reads it`),
    ];
    expect(problems).toEqual([]);
  });

  test.each(serviceFolders().filter((s) => SERVICE_SCHEMAS[s]))('%s: names and defaults', (service) => {
    expect(envProblems(service, tables)).toEqual([]);
  });

  test('the provider credentials are the variables the catalogue names', () => {
    expect([...(tables.get('Provider credentials')?.keys() ?? [])].sort()).toEqual([...PROVIDER_ENV].sort());
  });
});

describe('resetting a lost management key', () => {
  const logger = testLogger();
  let work: string;
  beforeEach(() => { work = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-ops-doc-')); });
  afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

  /** Starts keys on these engines with this seed account, returns the management key it announced (if any). */
  async function startKeys(store: Store, busDir: string, account: string): Promise<string | undefined> {
    const engines = await openEngines(busDir, logger);
    const announced: string[] = [];
    const service = await startKeysService({
      config: {
        KEYS_HTTP_PORT: await freePort(), KEYS_GRPC_PORT: await freePort(), BILLING_GRPC_ADDR: await deadAddress(),
        SEED_ACCOUNTS: [{ id: account }], GATEWAY_IDENTITY_SECRET: KEYS_TEST_SECRET, BIND_HOST: '127.0.0.1',
      },
      store, bus: engines.bus, logger, announce: (line) => { announced.push(line); },
    });
    await service.stop();
    await engines.close();
    expect(announced.length).toBeLessThanOrEqual(1);
    return announced[0] ? /: (sk-gw-v1-\S+)$/.exec(announced[0])?.[1] : undefined;
  }

  async function expectReset(store: Store, account: string, lost: string, fresh: string | undefined) {
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(lost);
    const keys = KeyStore.over(store);
    expect(await keys.findByHash(hashSecret(lost))).toMatchObject({ account_id: account, is_management: false, disabled: true });
    expect(await keys.findByHash(hashSecret(fresh!))).toMatchObject({ account_id: account, is_management: true, disabled: false });
  }

  test('single-machine mode: the documented command, then a restart, gives the account a new management key', async () => {
    const dataDir = path.join(work, 'keys');
    let store = await createStore({ engine: 'embedded', dataDir });
    const lost = await startKeys(store, path.join(work, 'bus'), 'acct_local');
    expect(lost).toBeDefined();
    await store.close();

    const command = fencedBlock(doc, "node -e 'const { DatabaseSync }").replace('./data/keys/store.sqlite', path.join(dataDir, 'store.sqlite'));
    expect(execFileSync('bash', ['-c', command], { encoding: 'utf8', cwd: ROOT })).toContain('1 management key(s) of acct_local disabled');

    store = await createStore({ engine: 'embedded', dataDir });
    try {
      await expectReset(store, 'acct_local', lost!, await startKeys(store, path.join(work, 'bus'), 'acct_local'));
      expect(await startKeys(store, path.join(work, 'bus'), 'acct_local')).toBeUndefined(); // only once
    } finally {
      await store.close();
    }
  }, 60_000);

  test('Kubernetes (MongoDB): the documented update, then a restart, gives the account a new management key', async () => {
    const base = process.env.MONGO_URL;
    if (!base) throw new Error('MONGO_URL is not set: run the unit project (its globalSetup starts the engines)');
    const url = base.replace(/^(mongodb:\/\/[^/?]+)(?:\/[^?]*)?/, `$1/ops_doc_${randomUUID().replace(/-/g, '')}`);
    const store = await createStore({ engine: 'mongo', url });
    try {
      const lost = await startKeys(store, path.join(work, 'bus'), 'acct_main');
      expect(lost).toBeDefined();
      // The mongosh --eval script of the procedure, run on the same collection through the store's MongoDB engine.
      const script = /--eval '\n?([\s\S]*?)'/.exec(fencedBlock(doc, 'kubectl -n gateway scale deployment/keys --replicas=1'))?.[1];
      expect(script).toContain('db.keys.updateMany(');
      // eslint-disable-next-line @typescript-eslint/no-implied-eval
      await new Function('db', `return ${script!.trim()};`)({ keys: store.collection('keys') });
      await expectReset(store, 'acct_main', lost!, await startKeys(store, path.join(work, 'bus'), 'acct_main'));
    } finally {
      await store.collection('keys').deleteMany({});
      await store.close();
    }
  }, 60_000);
});

test('the online backup of the data dir copies every store and the files', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-ops-backup-'));
  try {
    const dataDir = path.join(work, 'data');
    for (const service of ['keys', 'billing']) {
      const store = await createStore({ engine: 'embedded', dataDir: path.join(dataDir, service) });
      await store.collection<{ _id: string; n: number }>(service).insertOne({ _id: `${service}-1`, n: 1 });
      await store.close();
    }
    fs.mkdirSync(path.join(dataDir, 'batch/blobs'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'batch/blobs/file-1'), 'input lines');
    fs.writeFileSync(path.join(dataDir, 'webhooks-secrets.key'), 'key');
    const backup = path.join(work, 'backup');
    const block = fencedBlock(doc, 'DATA_DIR=./data BACKUP=');
    const command = block.replace(/^DATA_DIR=.*$/m, `DATA_DIR='${dataDir}' BACKUP='${backup}'`);
    expect(command).not.toBe(block);
    execFileSync('bash', ['-e', '-c', command], { encoding: 'utf8' });

    for (const service of ['keys', 'billing']) {
      const copy = await createStore({ engine: 'embedded', dataDir: path.join(backup, service) });
      expect(await copy.collection(service).findOne({ _id: `${service}-1` })).toMatchObject({ n: 1 });
      await copy.close();
    }
    expect(fs.readFileSync(path.join(backup, 'batch/blobs/file-1'), 'utf8')).toBe('input lines');
    expect(fs.readFileSync(path.join(backup, 'webhooks-secrets.key'), 'utf8')).toBe('key');
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}, 60_000);
