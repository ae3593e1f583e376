import type { ChatProvider } from '@gw/provider-spec';
import { AnthropicChatProvider } from './anthropic/anthropic-chat-provider';
import { GeminiChatProvider } from './gemini/gemini-chat-provider';
import { OriginPools } from './http/origin-pools';
import { AZURE_OPENAI_DIALECT, OpenAICompatibleChatProvider } from './openai-compatible/openai-chat-provider';

export type ChatProviderKind = 'openai-compatible' | 'azure-openai' | 'anthropic' | 'gemini';

/** One provider per upstream wire format. Create each once per process: it owns the connection pools. */
export function createChatProvider(kind: string): ChatProvider {
  switch (kind) {
    case 'openai-compatible':
      return new OpenAICompatibleChatProvider();
    case 'azure-openai':
      return new OpenAICompatibleChatProvider(new OriginPools(), AZURE_OPENAI_DIALECT);
    case 'anthropic':
      return new AnthropicChatProvider();
    case 'gemini':
      return new GeminiChatProvider();
    default:
      throw new Error(`Unknown chat provider kind "${kind}"`);
  }
}
