import type { MediaProvider } from '@gw/provider-spec';
import { SeedreamImageProvider } from './ark/seedream-image-provider';
import { EspeakSpeechProvider } from './espeak-ng/espeak-speech-provider';
import { OpenAIMediaProvider } from './openai-media/openai-media-provider';
import { PocketsphinxProvider } from './pocketsphinx/pocketsphinx-provider';

/** One media provider per wire format (catalogue provider `kind`); an unknown kind is a configuration error. */
export function createMediaProvider(kind: string): MediaProvider {
  switch (kind) {
    case 'openai-compatible':
      return new OpenAIMediaProvider();
    case 'espeak-ng':
      return new EspeakSpeechProvider();
    case 'ark':
      return new SeedreamImageProvider();
    case 'pocketsphinx':
      return new PocketsphinxProvider();
    default:
      throw new Error(`Unknown media provider kind "${kind}"`);
  }
}
