import type { VideoTaskState } from '@gw/provider-spec';
import type { OpenAIVideo } from './openai-video-api';

/** An OpenAI video object as the normalized task state; a completed video is billed by its `seconds`. */
export function convertOpenAIVideoState(video: OpenAIVideo, raw: unknown): VideoTaskState {
  const seconds = video.seconds === null || video.seconds === undefined ? null : Number(video.seconds);
  const duration = seconds !== null && Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  const completed = video.status === 'completed';
  const parameters: Record<string, unknown> = {};
  if (video.size) parameters.size = video.size;
  if (duration !== null) parameters.duration = duration;
  return {
    status: video.status,
    upstreamStatus: video.status,
    progress: video.progress ?? null,
    error: video.status === 'failed'
      ? { code: video.error?.code || 'video_generation_failed', message: video.error?.message || 'The provider failed to generate the video' }
      : null,
    durationSeconds: duration,
    parameters,
    lastFrameUrl: null,
    usage: completed && duration !== null ? { video_duration_seconds: duration } : null,
    raw: raw as Record<string, unknown>,
  };
}
