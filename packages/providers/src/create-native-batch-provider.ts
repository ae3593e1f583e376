import type { NativeBatchProvider } from '@gw/provider-spec';
import { AnthropicBatchProvider } from './anthropic/anthropic-batch-provider';
import type { ChatProviderKind } from './create-chat-provider';
import { OpenAIBatchProvider } from './openai-compatible/openai-batch-provider';

/**
 * Which wire formats have a batch adapter here. A Record over every kind, so a new kind does not compile until
 * it is decided. Azure OpenAI's batch API addresses deployments and files differently and Gemini's batch mode
 * is another API again: neither is adapted, so their deployments cannot be native batch routes.
 */
const HAS_BATCH_ADAPTER: Record<ChatProviderKind, boolean> = {
  'openai-compatible': true,
  'azure-openai': false,
  anthropic: true,
  gemini: false,
};

/** Whether deployments of this wire format can run batches on the provider's batch API; throws on an unknown kind. */
export function hasNativeBatchAdapter(kind: string): boolean {
  const found = HAS_BATCH_ADAPTER[kind as ChatProviderKind];
  if (found === undefined) throw new Error(`Unknown chat provider kind "${kind}"`);
  return found;
}

/** One batch adapter per upstream wire format. Create each once per process: it owns the connection pools. */
export function createNativeBatchProvider(kind: string): NativeBatchProvider {
  switch (kind) {
    case 'openai-compatible':
      return new OpenAIBatchProvider();
    case 'anthropic':
      return new AnthropicBatchProvider();
    case 'azure-openai':
    case 'gemini':
      throw new Error(`Provider kind "${kind}" has no native batch adapter; its deployments cannot set native_batch`);
    default:
      throw new Error(`Unknown chat provider kind "${kind}"`);
  }
}
