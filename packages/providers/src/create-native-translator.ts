import type { NativeApi, NativeApiTranslator } from '@gw/provider-spec';
import { AnthropicMessagesTranslator } from './anthropic/anthropic-messages-translator';
import { OpenAIResponsesTranslator } from './openai-compatible/openai-responses-translator';

/**
 * One translator per (native API, upstream wire format) pair. A pair not listed here is not served: the
 * caller gets a clear error instead of a half-translated request.
 */
export function createNativeTranslator(api: NativeApi, kind: string): NativeApiTranslator | null {
  switch (`${api}:${kind}`) {
    case 'messages:anthropic': return new AnthropicMessagesTranslator();
    case 'responses:openai-compatible': return new OpenAIResponsesTranslator();
    default:
      return null;
  }
}
