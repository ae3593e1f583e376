import type { Collection, Store } from '@gw/store';

/** An account's default webhook. The signing secret is stored sealed (see SecretBox), never in the clear. */
export interface WebhookSettingsDoc {
  /** The account id. */
  _id: string;
  url: string | null;
  sealed_secret: string | null;
  updated_at_ms: number;
}

export class SettingsStore {
  private constructor(private readonly settings: Collection<WebhookSettingsDoc>) {}

  static over(store: Store): SettingsStore {
    return new SettingsStore(store.collection<WebhookSettingsDoc>('webhook_settings'));
  }

  get(accountId: string): Promise<WebhookSettingsDoc | null> {
    return this.settings.findOne({ _id: accountId });
  }

  /** Sets the URL, and the sealed secret when one was made (else the stored one is kept); one atomic write. */
  async put(accountId: string, url: string | null, sealedSecret: string | null, nowMs: number): Promise<WebhookSettingsDoc> {
    const update = sealedSecret === null
      ? { $set: { url, updated_at_ms: nowMs }, $setOnInsert: { sealed_secret: null } }
      : { $set: { url, updated_at_ms: nowMs, sealed_secret: sealedSecret } };
    await this.settings.updateOne({ _id: accountId }, update, { upsert: true });
    return (await this.get(accountId))!;
  }
}
