import { randomUUID } from 'node:crypto';
import { checkOutboundUrl, type OutboundPolicy } from '@gw/net-guard';
import { currentTraceparent, InputError, PermissionError } from '@gw/platform';
import type { ListPage, PageQuery } from '@gw/store';
import type { CallbackIntake } from './callback-intake';
import type { DeliveryAttemptDoc, DeliveryLog } from './delivery-log';
import type { SettingsStore, WebhookSettingsDoc } from './settings-store';
import { newSigningSecret, type SecretBox } from './signing-secret';

export interface Caller {
  accountId: string;
  isManagement: boolean;
}

export interface SettingsView {
  url: string | null;
  has_secret: boolean;
  updated_at: string | null;
}

export interface PutSettingsInput {
  url: string | null;
  rotate_secret: boolean;
}

export interface DeliveryView {
  id: string;
  object: 'webhook.delivery_attempt';
  event_id: string;
  event: string;
  url: string;
  status: DeliveryAttemptDoc['state'];
  attempt: number;
  response_code: number | null;
  latency_ms: number | null;
  error: string | null;
  created_at: string;
}

export interface WebhooksServiceDeps {
  settings: SettingsStore;
  log: DeliveryLog;
  secrets: SecretBox;
  intake: CallbackIntake;
  policy: OutboundPolicy;
  now?: () => number;
}

const view = (doc: WebhookSettingsDoc | null): SettingsView => ({
  url: doc?.url ?? null,
  has_secret: Boolean(doc?.sealed_secret),
  updated_at: doc ? new Date(doc.updated_at_ms).toISOString() : null,
});

const deliveryView = (a: DeliveryAttemptDoc): DeliveryView => ({
  id: a._id, object: 'webhook.delivery_attempt', event_id: a.event_id, event: a.event, url: a.url, status: a.state, attempt: a.attempt,
  response_code: a.response_status, latency_ms: a.latency_ms, error: a.error, created_at: new Date(a.started_at_ms).toISOString(),
});

/** The account's default webhook (URL + signing secret, shown once), its test event and its delivery log. */
export class WebhooksService {
  private readonly now: () => number;

  constructor(private readonly deps: WebhooksServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  async settings(caller: Caller): Promise<SettingsView> {
    return view(await this.deps.settings.get(caller.accountId));
  }

  /** Where the account's callbacks go and who can verify them: a management key's decision. */
  async putSettings(caller: Caller, input: PutSettingsInput): Promise<SettingsView & { secret?: string }> {
    if (!caller.isManagement) throw new PermissionError('Changing the webhook settings needs a management key');
    // Stored as the URL parser spells it (e.g. a decimal IPv4 host in dotted form), so the log shows what is called.
    const url = input.url === null ? null : (await checkOutboundUrl(input.url, { ...this.deps.policy, param: 'url' })).url.href;
    const secret = input.rotate_secret ? newSigningSecret() : null;
    const doc = await this.deps.settings.put(caller.accountId, url, secret === null ? null : this.deps.secrets.seal(secret), this.now());
    return secret === null ? view(doc) : { ...view(doc), secret };
  }

  /** Sends a signed `webhook.test` event to the default URL through the delivery path every callback takes. */
  async sendTest(caller: Caller): Promise<{ event_id: string; event: string; url: string; status: 'queued' }> {
    if (!caller.isManagement) throw new PermissionError('Sending a test event needs a management key');
    const current = await this.deps.settings.get(caller.accountId);
    if (!current?.url) throw new InputError('No default webhook URL is set: PUT /v1/webhooks/settings first', 'url', 'webhook_not_configured');
    const eventId = `evt_${randomUUID().replace(/-/g, '')}`;
    const body = JSON.stringify({ id: eventId, object: 'event', event: 'webhook.test', created_at: Math.floor(this.now() / 1000) });
    const accepted = await this.deps.intake.accept({
      event_id: eventId, account_id: caller.accountId, kind: 'batch', event: 'webhook.test', url: current.url, body_json: body, signed: true, created_at_ms: this.now(),
      traceparent: currentTraceparent() ?? '',
    });
    return { event_id: eventId, event: 'webhook.test', url: accepted?.url ?? current.url, status: 'queued' };
  }

  deliveries(caller: Caller, query: PageQuery): Promise<ListPage<DeliveryView>> {
    return this.deps.log.list(caller.accountId, query, deliveryView);
  }
}
