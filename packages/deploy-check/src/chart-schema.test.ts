import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CHART_DIR, deployTools, renderChart } from './chart';
import { ROOT } from './manifests';

/**
 * scripts/deploy-check.sh: the chart renders with its defaults and with every option on, and every object passes
 * the Kubernetes JSON schemas (kubeconform, strict, offline). This test is how CI runs it.
 */

const script = path.join(ROOT, 'scripts/deploy-check.sh');
const run = (env: Record<string, string> = {}) =>
  spawnSync('bash', [script], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });

beforeAll(() => {
  deployTools(); // the first run on a machine builds helm: not counted against a test's time
}, 900_000);

test('the chart renders with the default and the all-options values, and every object passes the Kubernetes schemas', () => {
  const r = run();
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(r.stdout).toMatch(/default values: .*Valid: \d+, Invalid: 0, Errors: 0/);
  expect(r.stdout).toMatch(/all-options values: .*Valid: \d+, Invalid: 0, Errors: 0/);
}, 120_000);

describe('a chart that breaks the schema fails, naming the object and the field', () => {
  let copy: string;
  beforeEach(() => {
    copy = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-chart-'));
    fs.cpSync(CHART_DIR, copy, { recursive: true });
  });
  afterEach(() => fs.rmSync(copy, { recursive: true, force: true }));

  const edit = (file: string, from: string, to: string) => {
    const full = path.join(copy, file);
    const text = fs.readFileSync(full, 'utf8');
    expect(text).toContain(from);
    fs.writeFileSync(full, text.replace(from, to));
  };

  test('a misspelt field', () => {
    edit('values.yaml', '  readOnlyRootFilesystem: true', '  readOnlyRootFileSystem: true');
    const r = run({ DEPLOY_CHECK_CHART: copy });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/Deployment edge is invalid.*\/spec\/template\/spec\/containers\/0\/securityContext.*readOnlyRootFileSystem/);
  }, 120_000);

  test('a value of the wrong type', () => {
    edit('templates/simulator.yaml', 'periodSeconds: 20', 'periodSeconds: twenty');
    const r = run({ DEPLOY_CHECK_CHART: copy });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/Deployment simulator is invalid.*\/spec\/template\/spec\/containers\/0\/livenessProbe\/periodSeconds/);
  }, 120_000);
});

describe('values.schema.json: helm refuses values that do not fit, naming them', () => {
  const refusal = (set: Record<string, string>): string => {
    try {
      renderChart([], set);
    } catch (err) {
      return String((err as { stderr?: unknown }).stderr ?? err);
    }
    throw new Error(`helm rendered the chart with ${JSON.stringify(set)}`);
  };

  test.each<[string, Record<string, string>, RegExp]>([
    ['a misspelt setting of a service', { 'services.edge.replica': '3' }, /at '\/services\/edge': additional properties 'replica' not allowed/],
    ['an embedded store (one Deployment per service needs MongoDB)', { 'config.STORE': 'embedded' }, /at '\/config\/STORE': value must be 'mongo'/],
    ['an identity secret under 32 bytes', { 'secrets.create': 'true', 'secrets.identity.value': 'short' }, /at '\/secrets\/identity\/value': minLength: got 5, want 32/],
    ['a service with neither replicas nor an autoscaler', { 'services.edge.autoscaling.enabled': 'false' }, /at '\/services\/edge'/],
  ])('%s', (_what, set, message) => {
    expect(refusal(set)).toMatch(message);
  }, 60_000);
});
