import { z } from 'zod';

/**
 * The UsageEvent as it arrives on the bus: proto3 JSON, where int64 may be a number or a decimal string and
 * absent fields mean their zero value. Parsed into one strict shape before anything is priced.
 */
const int64 = z.union([z.number(), z.string().regex(/^-?\d+$/)]).transform(Number).pipe(z.number().int());
const count = int64.pipe(z.number().min(0));
const seconds = z.union([z.number(), z.string()]).transform(Number).pipe(z.number().finite().min(0));
const text = z.string().nullish().transform((v) => v ?? '');
const flag = z.boolean().nullish().transform((v) => v ?? false);
const int64OrZero = int64.nullish().transform((v) => v ?? 0);

export const usageSchema = z.object({
  prompt_tokens: count.nullish(),
  completion_tokens: count.nullish(),
  total_tokens: count.nullish(),
  input_tokens: count.nullish(),
  output_tokens: count.nullish(),
  generated_images: count.nullish(),
  audio_duration_seconds: seconds.nullish(),
  video_duration_seconds: seconds.nullish(),
  provider_request_id: z.string().nullish(),
});

export const usageEventSchema = z.object({
  request_id: z.string().min(1),
  account_id: z.string().min(1),
  key_hash: text,
  model: text,
  provider: text,
  deployment: text,
  api_type: text,
  provider_response_id: text,
  served_model: text,
  streamed: flag,
  cancelled: flag,
  finish_reason: text,
  status: text,
  usage: usageSchema.nullish(),
  latency_ms: int64OrZero,
  generation_time_ms: int64OrZero,
  created_at_ms: int64OrZero,
  usage_estimated: flag,
  hold_id: text.pipe(z.string().regex(/^([A-Za-z0-9_-]{1,128})?$/, 'not a hold id')),
  hold_micros: int64OrZero.pipe(z.number().min(0)),
  media_ids: z.array(z.string().min(1).max(256)).max(100).nullish().transform((v) => v ?? []),
  // Correlation only: a malformed trace id is dropped rather than the charge refused.
  trace_id: text.transform((v) => (/^[0-9a-f]{32}$/.test(v) ? v : '')),
});

export type UsageEvent = z.infer<typeof usageEventSchema>;
export type Usage = z.infer<typeof usageSchema>;

/** Only the Usage fields the provider reported (the spec: fields appear only when returned). */
export function presentUsageFields(usage: Usage | null | undefined): Partial<Record<keyof Usage, number | string>> {
  const out: Partial<Record<keyof Usage, number | string>> = {};
  if (!usage) return out;
  for (const [k, v] of Object.entries(usage) as [keyof Usage, number | string | null | undefined][]) {
    if (v !== null && v !== undefined) out[k] = v;
  }
  return out;
}
