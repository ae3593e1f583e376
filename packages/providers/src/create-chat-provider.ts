import type { ChatCapabilities, ChatProvider } from '@gw/provider-spec';
import { AnthropicChatProvider } from './anthropic/anthropic-chat-provider';
import { ANTHROPIC_CAPABILITIES } from './anthropic/convert-to-anthropic-request';
import { GeminiChatProvider } from './gemini/gemini-chat-provider';
import { GEMINI_CAPABILITIES } from './gemini/convert-to-gemini-request';
import { OriginPools } from './http/origin-pools';
import { OPENAI_CAPABILITIES } from './openai-compatible/convert-to-openai-chat';
import { AZURE_OPENAI_DIALECT, OpenAICompatibleChatProvider } from './openai-compatible/openai-chat-provider';

export type ChatProviderKind = 'openai-compatible' | 'azure-openai' | 'anthropic' | 'gemini';

const CAPABILITIES: Record<ChatProviderKind, ChatCapabilities> = {
  'openai-compatible': OPENAI_CAPABILITIES,
  'azure-openai': OPENAI_CAPABILITIES,
  anthropic: ANTHROPIC_CAPABILITIES,
  gemini: GEMINI_CAPABILITIES,
};

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

/** What a wire format honours, without creating its provider (for the Model objects' supported_parameters). */
export function chatCapabilities(kind: string): ChatCapabilities {
  const found = CAPABILITIES[kind as ChatProviderKind];
  if (!found) throw new Error(`Unknown chat provider kind "${kind}"`);
  return found;
}
