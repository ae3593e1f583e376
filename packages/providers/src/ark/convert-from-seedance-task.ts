import type { VideoTaskState, VideoTaskStatus } from '@gw/provider-spec';
import type { SeedanceTask } from './seedance-api';

const STATUS: Record<SeedanceTask['status'], VideoTaskStatus> = {
  queued: 'queued', running: 'in_progress', succeeded: 'completed', failed: 'failed', cancelled: 'failed',
};

/** A Seedance task as the normalized state; a succeeded task is billed by its `duration`. */
export function convertSeedanceTaskState(task: SeedanceTask, raw: unknown): VideoTaskState {
  const status = STATUS[task.status];
  const duration = typeof task.duration === 'number' && task.duration >= 0 ? task.duration : null;
  const parameters: Record<string, unknown> = {};
  for (const key of ['resolution', 'ratio', 'duration', 'seed', 'framespersecond', 'generate_audio'] as const) {
    if (task[key] !== null && task[key] !== undefined) parameters[key] = task[key];
  }
  const usage = status === 'completed'
    ? {
      ...(duration !== null ? { video_duration_seconds: duration } : {}),
      ...(typeof task.usage?.completion_tokens === 'number' ? { completion_tokens: task.usage.completion_tokens } : {}),
      ...(typeof task.usage?.total_tokens === 'number' ? { total_tokens: task.usage.total_tokens } : {}),
    }
    : null;
  return {
    status,
    upstreamStatus: task.status,
    progress: status === 'completed' ? 100 : null,
    error: status === 'failed'
      ? {
        code: task.error?.code || (task.status === 'cancelled' ? 'cancelled' : 'video_generation_failed'),
        message: task.error?.message || (task.status === 'cancelled' ? 'The provider cancelled the task' : 'The provider failed to generate the video'),
      }
      : null,
    durationSeconds: duration,
    parameters,
    lastFrameUrl: task.content?.last_frame_url ?? null,
    usage,
    raw: raw as Record<string, unknown>,
  };
}
