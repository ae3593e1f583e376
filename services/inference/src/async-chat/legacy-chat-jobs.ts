import { JOBS_COLLECTION, type JobStatus } from '@gw/jobs';
import type { Identity, Logger } from '@gw/platform';
import type { Doc, Store } from '@gw/store';
import { CHAT_JOB_KIND, type ChatJobDoc } from './chat-job';

/** Where, and in which shape, async chat jobs lived before they moved onto the shared jobs collection. */
const LEGACY_COLLECTION = 'chat_jobs';
const PAGE = 200;

interface LegacyChatJobDoc extends Doc {
  status: JobStatus;
  model: string;
  request_id: string;
  qos: 'completion';
  account_id: string;
  identity: Identity;
  trace_id: string;
  request_json: string;
  created_at_ms: number;
  expires_at_ms: number;
  in_progress_at_ms?: number;
  completed_at_ms?: number;
  failed_at_ms?: number;
  cancelled_at_ms?: number;
  expired_at_ms?: number;
  cancel_requested_at_ms?: number;
  worker_id: string | null;
  lease_until_ms: number;
  attempts: number;
  completion_json?: string;
  error?: { code: string; message: string };
}

function toJobDoc(legacy: LegacyChatJobDoc): ChatJobDoc {
  const { model, request_id, qos, account_id, identity, trace_id, request_json, completion_json, ...job } = legacy;
  return {
    ...job,
    kind: CHAT_JOB_KIND,
    owner_id: account_id,
    payload: { model, request_id, qos, identity, trace_id, request_json },
    ...(completion_json === undefined ? {} : { result: { completion_json } }),
  };
}

/**
 * Moves jobs an earlier version stored in `chat_jobs` into the jobs collection, so a job submitted before an
 * upgrade can still be polled, cancelled and run after it. Safe on many instances at once: a job already
 * moved is skipped as a duplicate, and one a worker re-runs bills under its same request_id.
 */
export async function moveLegacyChatJobs(store: Store, logger: Logger): Promise<number> {
  const legacy = store.collection<LegacyChatJobDoc>(LEGACY_COLLECTION);
  const jobs = store.collection<ChatJobDoc>(JOBS_COLLECTION);
  let moved = 0;
  for (let page = await legacy.find({}, { limit: PAGE }); page.length > 0; page = await legacy.find({}, { limit: PAGE })) {
    const { insertedIds } = await jobs.insertMany(page.map(toJobDoc), { ignoreDuplicates: true });
    moved += insertedIds.length;
    await legacy.deleteMany({ _id: { $in: page.map((d) => d._id) } });
  }
  if (moved > 0) logger.info({ moved }, 'moved async chat jobs of an earlier version into the jobs collection');
  return moved;
}
