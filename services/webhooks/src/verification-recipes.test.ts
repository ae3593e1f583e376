import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { RunningService } from '@gw/platform';
import type { ReceivedRequest } from '@gw/net-guard/src/testing/tls-receiver';
import { callbackEvent, callService, identityOf, publishCallback, startTestService, startTrustedReceiver, testLogger, TestLocation, waitFor, type TestEngines } from './test-support';

jest.setTimeout(60_000);
const logger = testLogger();
const RECIPES = path.resolve(__dirname, '../../../docs/webhooks');

interface Case { secret: string; headers: Record<string, string>; body_b64: string; now?: number }

/** Runs a program with the case on stdin; it prints "true" or "false". */
function run(cmd: string, args: string[], input: Case): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd}: ${err.message}\n${stderr}`)) : resolve(stdout.trim())));
    child.stdin!.end(JSON.stringify(input));
  });
}

/** The README's Node recipe, imported as a receiver would import it. */
const viaNode = (c: Case) => run(process.execPath, ['--input-type=module', '-e', `
  import { verifyGatewaySignature } from ${JSON.stringify(path.join(RECIPES, 'verify.mjs'))};
  let text = ''; for await (const chunk of process.stdin) text += chunk;
  const c = JSON.parse(text);
  console.log(verifyGatewaySignature(c.secret, c.headers, Buffer.from(c.body_b64, 'base64'), c.now));
`], c);

/** The README's Python recipe, imported likewise. */
const viaPython = (c: Case) => run('python3', ['-c', `
import base64, json, sys
sys.path.insert(0, ${JSON.stringify(RECIPES)})
from verify import verify_gateway_signature
c = json.load(sys.stdin)
print("true" if verify_gateway_signature(c["secret"], c["headers"], base64.b64decode(c["body_b64"]), c.get("now")) else "false")
`], c);

describe('the README verification recipes verify real callbacks', () => {
  let location: TestLocation;
  let engines: TestEngines;
  let trusted: Awaited<ReturnType<typeof startTrustedReceiver>>;
  let service: RunningService;
  let secret: string;
  let got: ReceivedRequest;

  beforeAll(async () => {
    location = await TestLocation.create('embedded');
    engines = location.connect(logger);
    trusted = await startTrustedReceiver();
    service = await startTestService(engines, trusted.caFile, logger);
    const put = await callService(service.httpPort, 'PUT', '/v1/webhooks/settings', identityOf('acct_recipes'), { url: `${trusted.receiver.origin}/in`, rotate_secret: true });
    secret = put.body.data.secret;
    // A body with characters that re-serialization or a wrong encoding would change.
    const event = callbackEvent({ account_id: 'acct_recipes', body_json: '{"id":"batch_1","note":"naïve — ✓ \\u00e9","event":"batch.completed","n":1.50}' });
    await publishCallback(engines.bus, event);
    await waitFor('the callback', () => trusted.receiver.received.length === 1);
    got = trusted.receiver.received[0];
  });

  afterAll(async () => {
    await service.stop();
    await trusted.remove();
    await location.destroy();
  });

  const caseOf = (over: Partial<Case> = {}): Case => ({
    secret, headers: got.headers as Record<string, string>, body_b64: Buffer.from(got.body, 'utf8').toString('base64'), ...over,
  });

  it.each([['node', viaNode], ['python3', viaPython]])('%s: accepts the callback as sent, refuses a changed body, another secret, a stale or missing timestamp', async (_name, verify) => {
    const ts = Number(got.headers['svc-timestamp']);
    expect(await verify(caseOf())).toBe('true');
    expect(await verify(caseOf({ now: ts + 300 }))).toBe('true');
    expect(await verify(caseOf({ body_b64: Buffer.from(got.body.replace('1.50', '1.5')).toString('base64') }))).toBe('false');
    expect(await verify(caseOf({ secret: `${secret}x` }))).toBe('false');
    expect(await verify(caseOf({ now: ts + 301 }))).toBe('false');
    expect(await verify(caseOf({ now: ts - 301 }))).toBe('false');
    const { 'svc-timestamp': _dropped, ...noTimestamp } = got.headers as Record<string, string>;
    expect(await verify(caseOf({ headers: noTimestamp }))).toBe('false');
    // A replay with a fresh timestamp but the old signature.
    expect(await verify(caseOf({ headers: { ...(got.headers as Record<string, string>), 'svc-timestamp': String(ts + 1) } }))).toBe('false');
  });

  it('the Standard Webhooks library verifies the same callback with the same secret', () => {
    const wh = new Webhook(secret);
    expect(wh.verify(got.body, got.headers as Record<string, string>)).toMatchObject({ id: 'batch_1', note: 'naïve — ✓ é' });
    expect(() => wh.verify(got.body.replace('1.50', '1.5'), got.headers as Record<string, string>)).toThrow();
  });
});
