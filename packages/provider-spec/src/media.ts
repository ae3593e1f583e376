import type { ChatTarget } from './chat-provider';
import type { Usage } from './usage';

/**
 * Provider-free media calls: image generation and editing, transcription and speech. A media wire format
 * implements `MediaProvider` and declares, per operation, the normalized fields it honours; the media service
 * refuses (400 naming the field) anything a route cannot honour instead of dropping it.
 */

export type MediaTarget = ChatTarget;

/** An input image or mask: bytes the gateway holds, or a URL the provider fetches itself. */
export interface MediaInput {
  bytes?: Buffer;
  url?: string;
  mimeType: string;
  filename: string;
}

/** The normalized image request (the spec's POST /v1/images/generations fields, already validated). */
export interface ImageRequest {
  prompt: string;
  n: number;
  /** Every other field the caller set, by its public name (validated against the model's parameter schema). */
  params: Record<string, unknown>;
  /** Input images: present for an edit. */
  images: MediaInput[];
  mask?: MediaInput;
}

export interface ImageError {
  code: string;
  message: string;
}

/** One image of a result: its bytes (when returned inline) or the provider's URL, or its own failure. */
export interface GeneratedImage {
  b64Json?: string;
  url?: string;
  outputFormat: string;
  size?: string;
  revisedPrompt?: string;
  error: ImageError | null;
}

export interface ImageUsage extends Usage {
  input_images?: number;
  input_tokens_details?: Record<string, number>;
  output_tokens_details?: Record<string, number>;
  resolution?: string;
}

export interface ImageResult {
  created: number;
  servedModel: string;
  providerResponseId: string;
  images: GeneratedImage[];
  usage: ImageUsage;
  /** A request-level error payload the provider returned beside (or instead of) images. */
  error?: ImageError;
}

/** Streamed image events: partial renders, then each final image, then the usage. */
export type ImageStreamEvent =
  | { type: 'partial'; index: number; partialIndex: number; b64Json: string; outputFormat: string; size?: string }
  | { type: 'completed'; index: number; image: GeneratedImage }
  | { type: 'done'; usage: ImageUsage; servedModel: string; providerResponseId: string };

export interface AudioInput {
  bytes: Buffer;
  filename: string;
  mimeType: string;
}

export interface TranscriptionRequest {
  audio: AudioInput;
  /** `json`, `text`, `srt`, `vtt` or `verbose_json`. */
  responseFormat: string;
  /** Every other field the caller set (language, prompt, temperature, timestamp_granularities, ...). */
  params: Record<string, unknown>;
}

export interface TranscriptionSegment {
  id: number;
  start: number;
  end: number;
  text: string;
}

export interface Transcription {
  text: string;
  language?: string;
  duration?: number;
  segments?: TranscriptionSegment[];
  words?: { word: string; start: number; end: number }[];
  utterances?: { start: number; end: number; text: string; speaker?: string }[];
  usage: Usage;
  servedModel: string;
  providerResponseId: string;
}

export type TranscriptionStreamEvent =
  | { type: 'delta'; delta: string }
  | { type: 'done'; transcription: Transcription };

export interface SpeechRequest {
  input: string;
  voice: string;
  responseFormat: string;
  speed: number;
  /** Every other field the caller set (instructions, ...). */
  params: Record<string, unknown>;
}

/** Audio as it arrives from the provider. */
export interface SpeechAudio {
  contentType: string;
  chunks: AsyncIterable<Buffer>;
  providerResponseId: string;
}

/** The normalized fields each operation of a wire format honours, and the audio formats it can produce. */
export interface MediaCapabilities {
  imageGeneration: readonly string[];
  imageEdit: readonly string[];
  imageStream: boolean;
  transcription: readonly string[];
  transcriptionFormats: readonly string[];
  speech: readonly string[];
  speechFormats: readonly string[];
  /** Supplier-native bodies this format accepts (`Svc-Native-Params: true`). */
  native: readonly ('image' | 'speech')[];
}

/** A supplier-native body sent as is (model already rewritten, asset references already replaced). */
export interface NativeMediaCall {
  kind: 'image' | 'speech';
  body: Record<string, unknown>;
}

export type NativeMediaAnswer =
  | { type: 'json'; body: unknown; providerResponseId: string }
  | { type: 'audio'; audio: SpeechAudio };

/**
 * One media wire format. Failures are the platform's typed errors, tagged `retryable` like chat's. A format
 * has the operations it can do: the media service routes an operation only to formats that have it.
 */
export interface MediaProvider {
  readonly kind: string;
  readonly capabilities: MediaCapabilities;
  images?(req: ImageRequest, target: MediaTarget, signal?: AbortSignal): Promise<ImageResult>;
  imagesStream?(req: ImageRequest, target: MediaTarget, signal?: AbortSignal): Promise<AsyncIterable<ImageStreamEvent>>;
  transcribe?(req: TranscriptionRequest, target: MediaTarget, signal?: AbortSignal): Promise<Transcription>;
  transcribeStream?(req: TranscriptionRequest, target: MediaTarget, signal?: AbortSignal): Promise<AsyncIterable<TranscriptionStreamEvent>>;
  speech?(req: SpeechRequest, target: MediaTarget, signal?: AbortSignal): Promise<SpeechAudio>;
  native?(call: NativeMediaCall, target: MediaTarget, signal?: AbortSignal): Promise<NativeMediaAnswer>;
  close?(): Promise<void>;
}
