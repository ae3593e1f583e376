// Verifies a signed gateway callback: `Svc-Signature: sha256=<hex HMAC-SHA256 of "{Svc-Timestamp}.{raw body}">`
// under the account's signing secret (the whole `whsec_...` string, as shown once by PUT /v1/webhooks/settings).
// Pass the raw body bytes as received, never a re-serialized object. Node 18+, no dependencies.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TOLERANCE_SECONDS = 300;

/**
 * @param {string} secret the account's signing secret
 * @param {Record<string, string | string[] | undefined>} headers the request headers (Node lower-cases their names)
 * @param {Buffer | string} rawBody the body exactly as received
 * @returns {boolean} true only for an authentic callback signed within the last 300 s
 */
export function verifyGatewaySignature(secret, headers, rawBody, nowSeconds = Math.floor(Date.now() / 1000)) {
  const timestamp = String(headers['svc-timestamp'] ?? '');
  const signature = String(headers['svc-signature'] ?? '');
  if (!/^[0-9]+$/.test(timestamp) || signature === '') return false;
  // Refuse old (replayed) and far-future timestamps.
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`);
  const given = Buffer.from(signature);
  // Constant-time compare (lengths first: timingSafeEqual needs equal lengths).
  return given.length === expected.length && timingSafeEqual(given, expected);
}
