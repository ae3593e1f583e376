import { InputError } from '@gw/platform';
import type { VideoGenerationRequest } from '@gw/provider-spec';
import { convertOpenAIVideoState } from './openai-compatible/convert-from-openai-video';
import { convertToOpenAIVideo } from './openai-compatible/convert-to-openai-video';
import {
  RECORDED_OPENAI_VIDEO_COMPLETED, RECORDED_OPENAI_VIDEO_FAILED, RECORDED_OPENAI_VIDEO_IN_PROGRESS,
} from './openai-compatible/fixtures/recorded-openai-video-shapes';
import { openAIVideoSchema } from './openai-compatible/openai-video-api';
import { convertSeedanceTaskState } from './ark/convert-from-seedance-task';
import { convertToSeedanceTask } from './ark/convert-to-seedance-task';
import {
  RECORDED_SEEDANCE_CANCELLED, RECORDED_SEEDANCE_FAILED, RECORDED_SEEDANCE_RUNNING, RECORDED_SEEDANCE_SUCCEEDED,
} from './ark/fixtures/recorded-seedance-shapes';
import { seedanceTaskSchema } from './ark/seedance-api';

const req = (extra: Partial<VideoGenerationRequest> = {}): VideoGenerationRequest => ({ prompt: 'a cat on a skateboard', ...extra });

function refusal(run: () => unknown): { param: string | null; code: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof InputError) return { param: err.param, code: err.code };
    throw err;
  }
  throw new Error('expected an InputError');
}

describe('normalized video request -> OpenAI /videos body', () => {
  it.each([
    ['prompt only', req(), { model: 'sora-2', prompt: 'a cat on a skateboard' }],
    ['720p landscape', req({ resolution: '720p', aspect_ratio: '16:9' }), { size: '1280x720' }],
    ['720p portrait', req({ resolution: '720p', aspect_ratio: '9:16' }), { size: '720x1280' }],
    ['1080p landscape', req({ resolution: '1080p', aspect_ratio: '16:9' }), { size: '1792x1024' }],
    ['aspect ratio alone is 720p', req({ aspect_ratio: '9:16' }), { size: '720x1280' }],
    ['duration as a string of seconds', req({ duration: 8 }), { seconds: '8' }],
    ['audio on (always)', req({ generate_audio: true }), { prompt: 'a cat on a skateboard' }],
    ['no last frame, no watermark', req({ return_last_frame: false, watermark: false }), { prompt: 'a cat on a skateboard' }],
  ])('%s', (_name, request, expected) => {
    expect(convertToOpenAIVideo(request, 'sora-2')).toMatchObject(expected);
  });

  it.each([
    ['seed', req({ seed: 3 }), 'seed', 'unsupported_parameter'],
    ['silent video', req({ generate_audio: false }), 'generate_audio', 'unsupported_parameter'],
    ['last frame', req({ return_last_frame: true }), 'return_last_frame', 'unsupported_parameter'],
    ['watermark', req({ watermark: true }), 'watermark', 'unsupported_parameter'],
    ['480p', req({ resolution: '480p' }), 'resolution', 'unsupported_value'],
    ['square', req({ aspect_ratio: '1:1' }), 'aspect_ratio', 'unsupported_value'],
    ['5 seconds', req({ duration: 5 }), 'duration', 'unsupported_value'],
  ])('refuses %s naming the param', (_name, request, param, code) => {
    expect(refusal(() => convertToOpenAIVideo(request, 'sora-2'))).toEqual({ param, code });
  });
});

describe('normalized video request -> Seedance task body', () => {
  it('carries every field under its own name, the aspect ratio as ratio, the prompt as a text item', () => {
    expect(convertToSeedanceTask(req({
      resolution: '1080p', aspect_ratio: '21:9', duration: 10, seed: 7, watermark: false, return_last_frame: true, generate_audio: true,
    }), 'seedance-1-0-pro-250528')).toEqual({
      model: 'seedance-1-0-pro-250528', content: [{ type: 'text', text: 'a cat on a skateboard' }],
      resolution: '1080p', ratio: '21:9', duration: 10, seed: 7, watermark: false, return_last_frame: true, generate_audio: true,
    });
  });

  it('sends only what was set', () => {
    expect(convertToSeedanceTask(req(), 'm')).toEqual({ model: 'm', content: [{ type: 'text', text: 'a cat on a skateboard' }] });
  });

  it.each([
    ['4k', req({ resolution: '4k' }), 'resolution'],
    ['2:1', req({ aspect_ratio: '2:1' }), 'aspect_ratio'],
    ['1 second', req({ duration: 1 }), 'duration'],
    ['13 seconds', req({ duration: 13 }), 'duration'],
    ['2.5 seconds', req({ duration: 2.5 }), 'duration'],
    ['a seed past 2^32-1', req({ seed: 4_294_967_296 }), 'seed'],
  ])('refuses %s naming the param', (_name, request, param) => {
    expect(refusal(() => convertToSeedanceTask(request, 'm'))).toEqual({ param, code: 'unsupported_value' });
  });
});

describe('recorded task answers -> normalized state', () => {
  it.each([
    ['OpenAI in progress', () => convertOpenAIVideoState(openAIVideoSchema.parse(RECORDED_OPENAI_VIDEO_IN_PROGRESS), RECORDED_OPENAI_VIDEO_IN_PROGRESS),
      { status: 'in_progress', progress: 33, error: null, usage: null, durationSeconds: 8 }],
    ['OpenAI completed', () => convertOpenAIVideoState(openAIVideoSchema.parse(RECORDED_OPENAI_VIDEO_COMPLETED), RECORDED_OPENAI_VIDEO_COMPLETED),
      { status: 'completed', progress: 100, error: null, usage: { video_duration_seconds: 8 }, parameters: { size: '1280x720', duration: 8 } }],
    ['OpenAI failed', () => convertOpenAIVideoState(openAIVideoSchema.parse(RECORDED_OPENAI_VIDEO_FAILED), RECORDED_OPENAI_VIDEO_FAILED),
      { status: 'failed', usage: null, error: { code: 'moderation_blocked', message: 'Your request was blocked by our moderation system.' } }],
    ['Seedance running', () => convertSeedanceTaskState(seedanceTaskSchema.parse(RECORDED_SEEDANCE_RUNNING), RECORDED_SEEDANCE_RUNNING),
      { status: 'in_progress', upstreamStatus: 'running', error: null, usage: null, lastFrameUrl: null }],
    ['Seedance succeeded', () => convertSeedanceTaskState(seedanceTaskSchema.parse(RECORDED_SEEDANCE_SUCCEEDED), RECORDED_SEEDANCE_SUCCEEDED),
      {
        status: 'completed', durationSeconds: 5, lastFrameUrl: RECORDED_SEEDANCE_SUCCEEDED.content.last_frame_url,
        usage: { video_duration_seconds: 5, completion_tokens: 246840, total_tokens: 246840 },
        parameters: { resolution: '1080p', ratio: '16:9', duration: 5, seed: 10, framespersecond: 24 },
      }],
    ['Seedance failed', () => convertSeedanceTaskState(seedanceTaskSchema.parse(RECORDED_SEEDANCE_FAILED), RECORDED_SEEDANCE_FAILED),
      { status: 'failed', usage: null, error: RECORDED_SEEDANCE_FAILED.error }],
    ['Seedance cancelled', () => convertSeedanceTaskState(seedanceTaskSchema.parse(RECORDED_SEEDANCE_CANCELLED), RECORDED_SEEDANCE_CANCELLED),
      { status: 'failed', upstreamStatus: 'cancelled', error: { code: 'cancelled', message: 'The provider cancelled the task' } }],
  ])('%s', (_name, convert, expected) => {
    expect(convert()).toMatchObject(expected);
  });

  it('an unknown state word is a malformed answer, never guessed at', () => {
    expect(seedanceTaskSchema.safeParse({ ...RECORDED_SEEDANCE_RUNNING, status: 'paused' }).success).toBe(false);
    expect(openAIVideoSchema.safeParse({ ...RECORDED_OPENAI_VIDEO_IN_PROGRESS, status: 'paused' }).success).toBe(false);
  });
});
