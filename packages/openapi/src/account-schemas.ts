import { anyObject, bool, int, keyValueMetadata, num, obj, oneOf, orNull, str, type Schema } from './schema-helpers';

/** Keys, billing, usage, files and webhooks: shapes the spec leaves open, as API-NOTES.md fixes them. */
const perMinute = (what: string) => orNull(int(`the key's own ${what}-per-minute limit; null: the gateway's default`, { minimum: 1 }));
const usd = (description?: string) => str(description ?? 'USD decimal string', { pattern: '^-?\\d+\\.\\d+$' });

export const accountSchemas: Record<string, Schema> = {
  Key: obj({
    hash: str('hex SHA-256 of the secret'), name: str(), label: str('masked secret'), disabled: bool(),
    limit: orNull(num('USD; null = unlimited')), limit_remaining: orNull(num()), limit_reset: orNull(oneOf(['daily', 'weekly', 'monthly'])),
    usage: num(), usage_daily: num(), usage_weekly: num(), usage_monthly: num(),
    created_at: str('ISO 8601'), updated_at: orNull(str()), expires_at: orNull(str('ISO 8601')),
    requests_per_minute: orNull(int()), tokens_per_minute: orNull(int()),
  }, ['hash', 'name', 'label', 'disabled', 'limit', 'created_at']),
  KeyCreate: obj({
    name: str(undefined, { minLength: 1, maxLength: 128 }), limit: orNull(num('USD, at most 6 decimals')), limit_reset: orNull(oneOf(['daily', 'weekly', 'monthly'])),
    expires_at: orNull(str('ISO 8601 date-time with a time zone, or a date (midnight UTC); in the future')),
    requests_per_minute: perMinute('requests'), tokens_per_minute: perMinute('tokens'),
  }, ['name']),
  KeyUpdate: obj({
    name: str(undefined, { minLength: 1, maxLength: 128 }), disabled: bool(), limit: orNull(num('USD, at most 6 decimals')), limit_reset: orNull(oneOf(['daily', 'weekly', 'monthly'])),
    requests_per_minute: perMinute('requests'), tokens_per_minute: perMinute('tokens'),
  }),

  Balance: obj({ wallet: usd(), credit: usd(), spendable: usd('wallet + credit'), currency: oneOf(['USD']) }, ['wallet', 'credit', 'spendable', 'currency']),
  RequestRecord: obj({
    request_id: str('br-<UUIDv4>'), id: orNull(str('provider-facing id')), created_at: str('ISO 8601'), model: str(), provider_name: str(),
    api_type: oneOf(['chat', 'responses', 'messages', 'image', 'video', 'transcription', 'speech', 'batch']), status: str(),
    streamed: bool(), cancelled: bool(), usage: { $ref: '#/components/schemas/Usage' }, usage_estimated: bool('usage estimated by the gateway'),
    list_cost: usd(), charged_cost: usd(), price_factor: str(), latency_ms: int(), generation_time_ms: int(),
    finish_reason: orNull(str()), key_hash: str(), trace_id: orNull(str('W3C trace id of the request')),
  }, ['request_id', 'created_at', 'model', 'api_type', 'status', 'list_cost', 'charged_cost']),
  ArchivedCall: obj({
    request_id: str(), request: anyObject('the request body (secrets removed)'), response: { description: 'the response body, a stream reassembled' },
    streamed: bool(), truncated: bool(), created_at: str('ISO 8601'),
  }, ['request_id', 'streamed', 'created_at']),
  UsageRow: obj({
    start: str('ISO 8601'), end: str('ISO 8601'), model: str(), key_hash: str(), provider: str(), api_type: str(),
    requests: int('every counted call: billed, and failed without usage'), errors: int('failures not the caller\'s: provider, gateway, streams broken midway'),
    client_errors: int('refusals the caller can fix (spend, invalid request)'), error_kinds: { type: 'object', additionalProperties: { type: 'integer' }, description: 'errors and client_errors by error code' },
    prompt_tokens: int(), completion_tokens: int(), list_cost: usd(), charged_cost: usd(),
    latency_ms_p50: orNull(num()), latency_ms_p95: orNull(num()),
  }, ['start', 'end', 'requests', 'errors', 'list_cost', 'charged_cost']),

  FileObject: obj({
    id: str('file-...'), object: oneOf(['file']), bytes: int(), created_at: int(), filename: str(),
    purpose: oneOf(['batch', 'batch_output']), expires_at: orNull(int()),
  }, ['id', 'object', 'bytes', 'created_at', 'filename', 'purpose']),
  FileUpload: obj({ file: str('JSONL', { contentMediaType: 'application/octet-stream' }), purpose: oneOf(['batch']) }, ['file', 'purpose'],
    'Any other form field, or one given twice, is a 400 naming it.', { additionalProperties: false }),
  Deleted: obj({ id: str(), object: str(), deleted: bool() }, ['deleted']),

  BatchCreate: obj({
    input_file_id: str(), endpoint: oneOf(['/v1/chat/completions']), completion_window: oneOf(['24h']),
    execution: oneOf(['auto', 'provider', 'platform'], 'default auto'), callback_url: str('HTTPS; private and loopback addresses are rejected', { format: 'uri' }),
    metadata: keyValueMetadata(),
  }, ['input_file_id', 'endpoint', 'completion_window'], 'Any other field is a 400 `unknown_parameter`.', { additionalProperties: false }),

  WebhookSettings: obj({ url: orNull(str()), has_secret: bool(), updated_at: orNull(str()), secret: str('shown only when made') }, ['url', 'has_secret', 'updated_at']),
  WebhookSettingsUpdate: obj({ url: orNull(str('HTTPS callback URL', { format: 'uri' })), rotate_secret: bool() }, ['url'],
    'Any other field is a 400 `unknown_parameter`.', { additionalProperties: false }),
  WebhookTestEvent: obj({ event_id: str(), event: oneOf(['webhook.test']), url: str(), status: oneOf(['queued']) }, ['event_id', 'event', 'url', 'status']),
  WebhookDeliveryAttempt: obj({
    id: str(), object: oneOf(['webhook.delivery_attempt']), event_id: str(), event: str(), url: str(), status: oneOf(['sending', 'succeeded', 'failed']),
    attempt: int(), response_code: orNull(int()), latency_ms: orNull(int()), error: orNull(str()), created_at: str(),
  }, ['id', 'event_id', 'event', 'url', 'status', 'attempt']),

  CountTokensResult: obj({ input_tokens: int() }, ['input_tokens']),
  VideoContentUrl: obj({ url: str('signed URL'), video_id: str(), expires_in: int('seconds') }, ['url', 'video_id', 'expires_in']),
  ImageRecord: obj({ id: str(), object: str(), created_at: int(), model: str(), url: str() }, ['id']),
  ProviderNative: anyObject('a provider-native body (passthrough)'),
};
