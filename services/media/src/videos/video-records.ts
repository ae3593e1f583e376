import type { Usage, VideoGenerationRequest, VideoTaskError } from '@gw/provider-spec';
import type { Collection, Doc, Store } from '@gw/store';

export type VideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

export const isTerminalVideo = (status: VideoStatus) => status === 'completed' || status === 'failed';

/** One video task of an account. Times are epoch milliseconds. */
export interface VideoDoc extends Doc {
  /** `video_<hex>`: the public video id. */
  _id: string;
  account_id: string;
  key_hash: string;
  /** The public model name. */
  model: string;
  prompt: string;
  status: VideoStatus;
  /** The platform billing id, made and stored before anything is sent upstream. */
  request_id: string;
  /** The caller's own business id, echoed in the callback. */
  caller_request_id: string | null;
  callback_url: string | null;
  /** The generation parameters asked for (normalized names), echoed as `parameters`. */
  parameters: Record<string, unknown>;
  /** The normalized request; null for a native-params request. */
  request: VideoGenerationRequest | null;
  /** A supplier-native body, kept as text (its keys are the supplier's, not ours). */
  native_body_json: string | null;
  /** The deployment the task was submitted to, once it was. */
  deployment_id: string | null;
  provider_name: string | null;
  provider_task_id: string | null;
  progress: number | null;
  /** The provider's last answer about the task, as text. */
  provider_response_json: string | null;
  /** Generation parameters as the provider reported them. */
  provider_parameters: Record<string, unknown>;
  duration_s: number | null;
  /** The provider's URL of the last frame (short-lived), and the gateway's copy of it. */
  last_frame_url: string | null;
  last_frame_blob_key: string | null;
  last_frame_type: string | null;
  blob_key: string | null;
  bytes: number | null;
  usage: Usage | null;
  error: VideoTaskError | null;
  /** Set with the completed state; cleared once billing's usage event is in the outbox. */
  usage_pending: boolean;
  /** Set with the terminal state when a callback is owed; cleared once it is in the outbox. */
  callback_pending: boolean;
  trace_id: string;
  /** The W3C traceparent of the submit request, so the callback's delivery joins its trace (absent when tracing is off, and in older tasks). */
  traceparent?: string | null;
  created_at_ms: number;
  updated_at_ms: number;
  completed_at_ms: number | null;
}

export const videosCollection = (store: Store): Collection<VideoDoc> => store.collection<VideoDoc>('videos');

export async function ensureVideoIndexes(videos: Collection<VideoDoc>): Promise<void> {
  await videos.ensureIndex({ fields: { account_id: 1, created_at_ms: -1 } });
  await videos.ensureIndex({ fields: { status: 1, created_at_ms: 1 } });
  await videos.ensureIndex({ fields: { usage_pending: 1 } });
  await videos.ensureIndex({ fields: { callback_pending: 1 } });
}

/** The video's blob key: one per video, under the account. */
export const videoBlobKey = (accountId: string, videoId: string) => `videos/${accountId}/${videoId}.mp4`;
export const lastFrameBlobKey = (accountId: string, videoId: string) => `videos/${accountId}/${videoId}.last-frame`;

/** A stored text of JSON, read back; null when absent or unreadable. */
export function parseStoredJson(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
