import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { toFile } from 'openai';
import type { Page } from 'playwright-core';
import { api, waitForBilledRequest } from './harness/api';
import { chromiumAvailable, CHROMIUM_PATH, launchChromium, type Browser } from './harness/browser';
import { E2E_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useCallbackReceiver } from './harness/callback-receiver';
import { useStack } from './harness/stack';

jest.setTimeout(120_000);

/**
 * The README's pictures of each page, taken by this test when `CONSOLE_SCREENSHOTS=1` (otherwise into a temp
 * dir, so an ordinary run leaves the checkout as it found it).
 */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1' ? path.resolve(__dirname, '../docs/console') : mkdtempSync(path.join(tmpdir(), 'gw-console-shots-'));
afterAll(() => { if (!SCREENSHOTS.includes('docs/console')) rmSync(SCREENSHOTS, { recursive: true, force: true }); });
const USAGE_URL = /\/v1\/usage\?/;

// Without Chromium (scripts/system-packages.sh could not install it) the browser tests cannot run: under CI that
// is a failure, elsewhere they are skipped.
const describeInBrowser = chromiumAvailable() || process.env.CI ? describe : describe.skip;

describeInBrowser('web console in Chromium against the single-process stack', () => {
  const callbacks = useCallbackReceiver('console');
  const stack = useStack('embedded', {
    env: { ...callbacks.env, WEBHOOKS_POLL_MS: '200', BATCH_PROGRESS_MS: '200', BATCH_POLL_MS: '200' },
  });
  let browser: Browser;
  let page: Page;
  const browserErrors: string[] = [];
  beforeAll(async () => {
    if (!chromiumAvailable()) throw new Error(`no Chromium at ${CHROMIUM_PATH}: run scripts/system-packages.sh as root`);
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('pageerror', (err) => browserErrors.push(err.message));
    // The API's refusals show in the console as failed loads (expected here); a blocked script or style would not.
    page.on('console', (msg) => { if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) browserErrors.push(msg.text()); });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  const edge = () => stack.baseURL.replace(/\/v1$/, '');
  const call = (method: string, p: string, key = stack.key, body?: unknown) => api(stack.baseURL, method, p, { key, body });
  // A secret shown once is painted over: the pictures are committed.
  const screenshot = (name: string) => page.screenshot({
    path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true, mask: [page.locator('.secret output')], maskColor: '#444',
  });
  const openPage = async (title: string) => {
    await page.getByRole('navigation', { name: 'Console pages' }).getByRole('link', { name: title }).click();
    await page.getByRole('heading', { level: 1, name: title }).waitFor();
  };

  let requestId: string;
  let batchId: string;

  beforeAll(async () => {
    // A billed call to look up, and a small batch to watch.
    const { response } = await stack.openai.chat.completions.create({ model: E2E_MODEL, messages: [{ role: 'user', content: 'hello console' }] }).withResponse();
    requestId = response.headers.get('x-request-id')!;
    await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    const lines = ['a', 'b', 'c'].map((id) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: E2E_MODEL, messages: [{ role: 'user', content: `line ${id}` }] } }));
    const file = await stack.openai.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'input.jsonl'), purpose: 'batch' });
    batchId = (await stack.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id;
  }, 60_000);

  it('is served behind the edge with no key, with a content security policy', async () => {
    const res = await fetch(`${edge()}/console/keys`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await res.text()).toContain('/console/assets/');
  });

  it('signs in with an API key kept in the tab only; a wrong key is refused', async () => {
    await page.goto(`${edge()}/console/`);
    await page.getByLabel('API key').fill('sk-gw-v1-not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/./);
    await screenshot('sign-in');
    await page.getByLabel('API key').fill(stack.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Console pages' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gw-console-key'))).toBe(stack.key);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await browser.context.cookies()).toEqual([]);
    expect(page.url()).not.toContain(stack.key);
  });

  it('keys: creates a key (secret shown once), sets its limit, disables it', async () => {
    await openPage('Keys');
    const create = page.getByRole('form', { name: 'Create a key' });
    await create.getByLabel('Name').fill('console-e2e');
    await create.getByLabel(/Spending limit/).fill('1.5');
    await create.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByRole('status', { name: 'New key secret value' }).textContent())!.trim();
    expect(secret).toMatch(/^sk-gw-v1-/);
    expect((await call('GET', '/key', secret)).status).toBe(200);
    const row = page.getByRole('row', { name: 'Key console-e2e' });
    await expect(row.textContent()).resolves.toContain('$1.5');
    await screenshot('keys');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByText(secret).count()).toBe(0);

    await row.getByLabel(/New limit/).fill('2.25');
    await row.getByRole('button', { name: 'Save limit' }).click();
    await waitFor('the new limit shown', async () => (await row.textContent())!.includes('$2.25'), 15_000);
    expect((await call('GET', '/key', secret)).body.data.limit).toBe(2.25);

    await row.getByRole('button', { name: 'Disable console-e2e' }).click();
    await row.getByRole('button', { name: 'Enable console-e2e' }).waitFor();
    await waitFor('the disabled key refused', async () => (await call('GET', '/key', secret)).status === 401, 15_000);
  });

  it('balance and usage: the balance the API reports, usage charted or said to be unavailable', async () => {
    await openPage('Balance and usage');
    const balance = (await call('GET', '/billing/balance')).body.data;
    await expect(page.getByLabel('Spendable').textContent()).resolves.toBe(`$${balance.spendable}`);
    const usage = await call('GET', `/usage?${new URLSearchParams({ from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString(), interval: 'hour', group_by: 'model' })}`);
    if (usage.status === 404) {
      await expect(page.getByRole('status').filter({ hasText: 'Not available on this gateway' }).textContent()).resolves.toContain('usage statistics');
    } else {
      expect(usage.status).toBe(200);
      await waitFor('usage of the call charted', async () => {
        await page.getByRole('button', { name: 'Show usage' }).click();
        return (await page.getByRole('table', { name: 'Usage' }).getByText(E2E_MODEL).count()) > 0;
      }, 60_000);
      await page.getByRole('img', { name: /over time/ }).waitFor();
    }
    await screenshot('usage');
  });

  it('usage: an answer in the documented shape (API-NOTES "Usage and archive") is charted by model and by key', async () => {
    // The page under test is the browser's; the answer is the documented one, the same whichever branch serves it.
    // The last two whole hours, inside the page's default period (the last 24 hours).
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
    const row = (startMs: number, group: Record<string, string>, requests: number, charged: string) => ({
      start: new Date(startMs).toISOString(), end: new Date(startMs + 3_600_000).toISOString(), ...group, requests, errors: 0,
      prompt_tokens: 10 * requests, completion_tokens: 20 * requests, list_cost: charged, charged_cost: charged, latency_ms_p50: 12, latency_ms_p95: 40,
    });
    const me = (await call('GET', '/key')).body.data;
    const answers: Record<string, unknown[]> = {
      model: [row(hour, { model: E2E_MODEL }, 3, '0.000048'), row(hour + 3_600_000, { model: E2E_MODEL }, 1, '0.000016'), row(hour + 3_600_000, { model: 'e2e/other' }, 2, '0.000100')],
      key: [row(hour, { key_hash: me.hash }, 4, '0.000064')],
    };
    const asked: URLSearchParams[] = [];
    await page.route(USAGE_URL, async (route) => {
      const q = new URL(route.request().url()).searchParams;
      asked.push(q);
      await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ object: 'list', data: answers[q.get('group_by')!] }) });
    });
    try {
      await openPage('Keys');
      await openPage('Balance and usage');
      const table = page.getByRole('table', { name: 'Usage' });
      await table.waitFor();
      expect(await table.getByRole('row').count()).toBe(4);
      const bars = page.getByRole('img', { name: 'Charged cost (USD) over time by 2 groups' }).locator('rect');
      expect(await bars.count()).toBe(3);
      // Each bar sits at its hour within the 24-hour axis (the plot spans x 56..712 of the 720-wide chart).
      const xs = await bars.evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('x'))));
      for (const x of xs) expect(x).toBeGreaterThan(600);
      for (const x of xs) expect(x).toBeLessThan(712);
      await expect(page.getByRole('list', { name: 'Legend' }).getByRole('listitem').allTextContents()).resolves.toEqual([E2E_MODEL, 'e2e/other']);

      await page.getByLabel('Group by').selectOption('key');
      await page.getByRole('button', { name: 'Show usage' }).click();
      await table.getByText(me.name).waitFor();
      const last = asked.at(-1)!;
      expect(last.get('interval')).toBe('hour');
      expect(Date.parse(last.get('to')!) - Date.parse(last.get('from')!)).toBe(86_400_000);

      // Per-minute rows cover at most a day: a longer period asks per hour.
      await page.getByLabel('Interval').selectOption('minute');
      await page.getByLabel('Period').selectOption('7d');
      expect(await page.getByLabel('Interval').inputValue()).toBe('hour');
      await page.getByRole('button', { name: 'Show usage' }).click();
      await waitFor('the 7-day query', async () => asked.at(-1)!.get('group_by') === 'key' && Date.parse(asked.at(-1)!.get('to')!) - Date.parse(asked.at(-1)!.get('from')!) === 7 * 86_400_000, 15_000);
      expect(asked.at(-1)!.get('interval')).toBe('hour');
    } finally {
      await page.unroute(USAGE_URL);
    }
  });

  it('request lookup: the billing record of a call by its request id, and its archived call', async () => {
    await openPage('Request lookup');
    await page.getByLabel('Request id or provider id').fill(requestId);
    await page.getByRole('button', { name: 'Look up' }).click();
    const record = page.getByRole('definition').filter({ hasText: requestId });
    await record.waitFor();
    const billed = (await call('GET', `/billing/requests/${requestId}`)).body.data;
    await expect(page.getByText(`$${billed.charged_cost} charged`).count()).resolves.toBe(1);
    const archive = await call('GET', `/billing/requests/${requestId}/archive`);
    if (archive.status === 200) {
      await expect(page.getByLabel('Archived request').textContent()).resolves.toContain('hello console');
    } else {
      expect(archive.status).toBe(404);
      await expect(page.getByRole('status').filter({ hasText: 'archived call is not available' }).count()).resolves.toBe(1);
    }
    await screenshot('requests');

    // The provider's id of the same call finds the same record.
    await page.getByLabel('Request id or provider id').fill(billed.id);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('definition').filter({ hasText: billed.id }).waitFor();
    await expect(page.getByRole('definition').filter({ hasText: requestId }).count()).resolves.toBe(1);

    await page.getByLabel('Request id or provider id').fill('br-00000000-0000-4000-8000-000000000000');
    await page.getByRole('button', { name: 'Look up' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('No call with id');
  });

  it('webhooks: sets the URL, shows a new signing secret once, sends a test event and lists its delivery', async () => {
    await openPage('Webhooks');
    await page.getByLabel('Default webhook URL').fill(`${callbacks.receiver.origin}/hooks`);
    await page.getByRole('button', { name: 'Save URL' }).click();
    await waitFor('the URL saved', async () => (await call('GET', '/webhooks/settings')).body.data.url === `${callbacks.receiver.origin}/hooks`, 15_000);
    await page.getByRole('button', { name: 'Create signing secret' }).click();
    const secret = (await page.getByRole('status', { name: 'Signing secret value' }).textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    const rotated = (await page.getByRole('status', { name: 'Signing secret value' }).textContent())!.trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByText(rotated).count()).toBe(0);

    await page.getByRole('button', { name: 'Send test event' }).click();
    const queued = (await page.getByRole('status').filter({ hasText: 'Test event' }).textContent())!;
    const eventId = /evt_[0-9a-f]+/.exec(queued)![0];
    await waitFor('the test event received', async () => callbacks.receiver.received.some((r) => r.headers['webhook-id'] === eventId), 30_000);
    const log = page.getByRole('table', { name: 'Deliveries' });
    await waitFor('the delivery logged as succeeded', async () => {
      await page.getByRole('button', { name: 'Refresh deliveries' }).click();
      const row = log.getByRole('row').filter({ hasText: eventId });
      return (await row.count()) === 1 && (await row.textContent())!.includes('succeeded');
    }, 30_000);
    await screenshot('webhooks');
  });

  it('batches and videos: a batch with its progress; a video looked up by id', async () => {
    await waitFor('the batch completed', async () => (await stack.openai.batches.retrieve(batchId)).status === 'completed', 90_000);
    await openPage('Batches and videos');
    const row = page.getByRole('row').filter({ hasText: batchId });
    await expect(row.textContent()).resolves.toContain('completed');
    await expect(row.getByRole('progressbar', { name: `Progress of ${batchId}` }).getAttribute('value')).resolves.toBe('3');

    await page.getByLabel('Video id').fill('video_unknown');
    await page.getByRole('button', { name: 'Show video' }).click();
    const videos = await call('GET', '/videos/video_unknown');
    expect(videos.status).toBe(404);
    const shown = videos.body.error?.code === 'route_not_found' ? page.getByRole('status').filter({ hasText: 'Not available on this gateway: videos' }) : page.getByRole('alert').filter({ hasText: 'No video with id' });
    await shown.waitFor();
    await screenshot('batches');
  });

  it('signs out: the key leaves the tab', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gw-console-key'))).toBeNull();
    expect(browserErrors).toEqual([]);
  });

  it('an ordinary key sees only itself, and cannot change the webhook settings', async () => {
    const created = await call('POST', '/keys', stack.key, { name: 'console-ordinary', limit: 3 });
    expect(created.status).toBe(201);
    await page.getByLabel('API key').fill(created.body.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await openPage('Keys');
    await expect(page.getByRole('status').filter({ hasText: 'needs a management key' }).count()).resolves.toBe(1);
    await expect(page.getByRole('table', { name: 'Keys' }).count()).resolves.toBe(0);
    await openPage('Webhooks');
    expect(await page.getByRole('button', { name: 'Save URL' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Send test event' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(browserErrors).toEqual([]);
  });
});
