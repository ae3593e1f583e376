import type { ForeignUrlOpener, VideoCapabilities, VideoProvider } from '@gw/provider-spec';
import { OPENAI_VIDEO_CAPABILITIES } from './openai-compatible/convert-to-openai-video';
import { OpenAIVideoProvider } from './openai-compatible/openai-video-provider';
import { SEEDANCE_CAPABILITIES } from './ark/convert-to-seedance-task';
import { SeedanceVideoProvider } from './ark/seedance-video-provider';

export type VideoProviderKind = 'openai-compatible' | 'ark';

const CAPABILITIES: Record<VideoProviderKind, VideoCapabilities> = {
  'openai-compatible': OPENAI_VIDEO_CAPABILITIES,
  ark: SEEDANCE_CAPABILITIES,
};

/** What the gateway hands every video adapter. */
export interface VideoProviderDeps {
  /** Opens result URLs off the provider's own origin, through the gateway's address guard. */
  foreignUrls: ForeignUrlOpener;
}

/** One video adapter per upstream wire format; throws on a kind without one. Create each once per process: it owns the connection pools. */
export function createVideoProvider(kind: string, deps: VideoProviderDeps): VideoProvider {
  switch (kind) {
    case 'openai-compatible':
      return new OpenAIVideoProvider();
    case 'ark':
      return new SeedanceVideoProvider(deps.foreignUrls);
    default:
      throw new Error(`Provider kind "${kind}" has no video adapter`);
  }
}

/** What a wire format honours of a video request, without creating its provider; throws on a kind without a video adapter. */
export function videoCapabilities(kind: string): VideoCapabilities {
  const found = CAPABILITIES[kind as VideoProviderKind];
  if (!found) throw new Error(`Provider kind "${kind}" has no video adapter`);
  return found;
}
