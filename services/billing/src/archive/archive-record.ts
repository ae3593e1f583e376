import { z } from 'zod';

/** The CallArchived message as it arrives on the bus (proto3 JSON: absent fields are their zero value). */
const text = z.string().nullish().transform((v) => v ?? '');
const flag = z.boolean().nullish().transform((v) => v ?? false);
const int64 = z.union([z.number(), z.string().regex(/^\d+$/)]).nullish().transform((v) => Number(v ?? 0)).pipe(z.number().int().min(0));

export const callArchivedSchema = z.object({
  // Part of a blob key: only id characters.
  request_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'not a request id'),
  account_id: z.string().min(1),
  key_hash: text,
  api_type: text,
  model: text,
  provider_response_id: text,
  streamed: flag,
  mode: z.enum(['full', 'metadata']),
  request_json: text,
  response_json: text,
  request_truncated: flag,
  response_truncated: flag,
  created_at_ms: int64,
  trace_id: text,
  unbilled: flag,
});

export type CallArchivedRecord = z.infer<typeof callArchivedSchema>;
