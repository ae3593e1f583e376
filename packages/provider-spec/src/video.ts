import type { ChatTarget } from './chat-provider';
import type { ParameterSupport } from './chat-capabilities';
import type { Usage } from './usage';

/**
 * Video generation as an upstream task: submit, poll until terminal, download the finished video. One
 * provider-free interface for every wire format (OpenAI-style `/videos`, async-task vendors such as Seedance).
 * Failures of the calls themselves are the platform's typed errors tagged with `retryable`, as chat calls are;
 * a task that failed upstream is a state (`failed` with its error), never a thrown error.
 */

/** The normalized request: the spec's POST /v1/videos generation fields (the gateway's own fields excluded). */
export interface VideoGenerationRequest {
  prompt: string;
  /** `480p`, `720p`, `1080p`. */
  resolution?: string;
  /** Seconds of video. */
  duration?: number;
  /** `16:9`, `9:16`, `1:1`, ... */
  aspect_ratio?: string;
  generate_audio?: boolean;
  /** Also return the last frame as an image (`content.last_frame_url`). */
  return_last_frame?: boolean;
  seed?: number;
  watermark?: boolean;
}

export type VideoParameter = Exclude<keyof VideoGenerationRequest, 'prompt'>;

/** Every generation parameter, at runtime (the Record makes a new field a compile error here). */
const VIDEO_PARAMETER_SET: Record<VideoParameter, true> = {
  resolution: true, duration: true, aspect_ratio: true, generate_audio: true, return_last_frame: true, seed: true, watermark: true,
};
export const VIDEO_PARAMETERS = Object.keys(VIDEO_PARAMETER_SET) as ReadonlyArray<VideoParameter>;

/** What a wire format can honour of a video request; a set parameter it cannot honour is a 400 naming it. */
export interface VideoCapabilities {
  parameters: Record<VideoParameter, ParameterSupport>;
}

/** The first set parameter `capabilities` cannot honour: `{param, message}`, or null. */
export function findUnsupportedVideoParameter(capabilities: VideoCapabilities, req: VideoGenerationRequest): { param: string; message: string } | null {
  for (const param of VIDEO_PARAMETERS) {
    const value = req[param];
    const support = capabilities.parameters[param];
    if (value === undefined || value === null || support === 'supported') continue;
    if (support === 'unsupported') return { param, message: `${param} is not supported by this model's provider` };
    if (!support.honouredWhen(value)) return { param, message: `${param} is supported by this model's provider only as ${support.values}` };
  }
  return null;
}

/** What identifies a submitted upstream task; JSON-serializable, stored by the caller and passed back from any process. */
export interface VideoTaskHandle {
  /** The upstream task id (`video_...`, `cgt-...`). */
  id: string;
}

export type VideoTaskStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

export const isTerminalVideoStatus = (status: VideoTaskStatus): boolean => status === 'completed' || status === 'failed';

export interface VideoTaskError {
  code: string;
  message: string;
}

/** The upstream task, normalized (upstream `running` is `in_progress`, `succeeded` is `completed`, `cancelled` is `failed`). */
export interface VideoTaskState {
  status: VideoTaskStatus;
  /** The provider's own status word, for logs and messages. */
  upstreamStatus: string;
  /** 0..100 when the provider reports it. */
  progress: number | null;
  error: VideoTaskError | null;
  /** Seconds of the finished video, when known (what billing charges). */
  durationSeconds: number | null;
  /** The generation parameters as the provider reports them (resolution, ratio, seed, ...). */
  parameters: Record<string, unknown>;
  /** The last frame's image URL (return_last_frame), when the provider gave one. */
  lastFrameUrl: string | null;
  usage: Usage | null;
  /** The provider's answer as sent, for the Video task's `response`. */
  raw: Record<string, unknown>;
}

/** The finished video's bytes, streamed from the provider. */
export interface VideoContent {
  body: AsyncIterable<Uint8Array>;
  contentType: string;
}

/** The error code of a finished video (or frame) at a URL the gateway refuses to fetch (an internal address, not https). */
export const VIDEO_DOWNLOAD_REFUSED = 'video_download_refused';

/** A body at a URL a provider's answer named, as the gateway opened it. */
export interface OpenedForeignUrl {
  status: number;
  contentType: string | null;
  /** Destroying it ends the connection (a reader that stops early). */
  body: AsyncIterable<Uint8Array> & { destroy(): unknown };
}

/**
 * Opens a URL a provider's answer named off the provider's own origin (a signed storage link to a finished
 * video). The gateway supplies it with its address guard: a URL it will not call throws a non-retryable
 * error coded `video_download_refused`; a body past the gateway's size limit errors while streaming.
 */
export interface ForeignUrlOpener {
  open(url: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<OpenedForeignUrl>;
}

export interface VideoSubmitOptions {
  /** Same key on every attempt of one submit; sent where the upstream deduplicates on a key. */
  idempotencyKey?: string;
}

export interface VideoProvider {
  readonly kind: string;
  readonly capabilities: VideoCapabilities;
  /** Throws the InputError the request would get at submit (an unsupported parameter, a value the provider refuses), calling no one. */
  checkRequest(req: VideoGenerationRequest): void;
  /** Converts and submits; `target.providerModel` is the upstream model. */
  submit(req: VideoGenerationRequest, target: ChatTarget, options?: VideoSubmitOptions, signal?: AbortSignal): Promise<VideoTaskHandle>;
  /** Submits a supplier-native body as given, with its `model` set to `target.providerModel`. */
  submitNative(body: Record<string, unknown>, target: ChatTarget, options?: VideoSubmitOptions, signal?: AbortSignal): Promise<VideoTaskHandle>;
  poll(handle: VideoTaskHandle, target: ChatTarget, signal?: AbortSignal): Promise<VideoTaskState>;
  /** The video of a completed task. */
  download(handle: VideoTaskHandle, state: VideoTaskState, target: ChatTarget, signal?: AbortSignal): Promise<VideoContent>;
  /** The last frame's image of a completed task whose state has a `lastFrameUrl` (formats that return one). */
  downloadLastFrame?(state: VideoTaskState, target: ChatTarget, signal?: AbortSignal): Promise<VideoContent>;
  close?(): Promise<void>;
}
