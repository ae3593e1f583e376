import { z } from 'zod';
import { usageEventSchema } from './src/usage-event';
test('x', () => { console.log(JSON.stringify(usageEventSchema.extend({ latency_ms: z.unknown() }).safeParse({ request_id: 'br-1', account_id: 'acct_a' }))); });
