import { createHmac } from 'node:crypto';

const WHSEC_PREFIX = 'whsec_';

/**
 * The headers of a signed callback, over the exact body bytes sent:
 * - the spec's `Svc-Timestamp` and `Svc-Signature: sha256=<lowercase hex HMAC-SHA256 of "{timestamp}.{body}">`,
 *   keyed with the secret string as the account was shown it;
 * - the Standard Webhooks `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of
 *   "{id}.{timestamp}.{body}">`, keyed with the base64-decoded part after `whsec_`, as that ecosystem's
 *   libraries verify it.
 */
export function signatureHeaders(secret: string, eventId: string, timestampSeconds: number, body: string): Record<string, string> {
  const ts = String(timestampSeconds);
  const svc = createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex');
  const standardKey = Buffer.from(secret.startsWith(WHSEC_PREFIX) ? secret.slice(WHSEC_PREFIX.length) : secret, 'base64');
  const standard = createHmac('sha256', standardKey).update(`${eventId}.${ts}.${body}`).digest('base64');
  return {
    'svc-timestamp': ts,
    'svc-signature': `sha256=${svc}`,
    'webhook-id': eventId,
    'webhook-timestamp': ts,
    'webhook-signature': `v1,${standard}`,
  };
}
