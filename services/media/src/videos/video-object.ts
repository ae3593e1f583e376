import type { SignedUrls } from '../signed-urls';
import { parseStoredJson, type VideoDoc } from './video-records';

/** The spec's Video task, as the poll endpoint returns it and the callback carries it. */
export interface VideoObject {
  id: string;
  object: 'video';
  status: VideoDoc['status'];
  model: string;
  prompt: string;
  created_at: number;
  updated_at: number;
  parameters: Record<string, unknown>;
  progress: number | null;
  response?: Record<string, unknown>;
  url?: string;
  video_url?: string;
  duration?: number;
  fileformat?: 'mp4';
  content?: { video_url: string; file_url: string; last_frame_url?: string };
  error?: { code: string; message: string };
  usage?: Record<string, unknown>;
}

export const videoFilename = (videoId: string) => `${videoId}.mp4`;

/**
 * The Video task. A completed video's `url` (and `video_url`, `content.video_url`, `content.file_url`) is a
 * fresh signed link to the gateway's own copy, never the provider's URL.
 */
export function toVideoObject(video: VideoDoc, urls: SignedUrls): VideoObject {
  const object: VideoObject = {
    id: video._id,
    object: 'video',
    status: video.status,
    model: video.model,
    prompt: video.prompt,
    created_at: Math.floor(video.created_at_ms / 1000),
    updated_at: Math.floor(video.updated_at_ms / 1000),
    parameters: { ...video.provider_parameters, ...video.parameters },
    progress: video.status === 'completed' ? 100 : video.progress,
  };
  const response = parseStoredJson(video.provider_response_json);
  if (response) object.response = response;
  if (video.status === 'completed' && video.blob_key) {
    const { url } = urls.sign({ blobKey: video.blob_key, contentType: 'video/mp4', filename: videoFilename(video._id) });
    object.url = url;
    object.video_url = url;
    object.fileformat = 'mp4';
    // The gateway's copy of the last frame when it has one; the provider's (short-lived) URL otherwise.
    const lastFrame = video.last_frame_blob_key
      ? urls.sign({ blobKey: video.last_frame_blob_key, contentType: video.last_frame_type ?? 'image/png' }).url
      : video.last_frame_url;
    object.content = { video_url: url, file_url: url, ...(lastFrame ? { last_frame_url: lastFrame } : {}) };
    if (video.duration_s !== null) object.duration = Math.round(video.duration_s);
  }
  if (video.error) object.error = video.error;
  if (video.usage) object.usage = { ...video.usage };
  return object;
}
