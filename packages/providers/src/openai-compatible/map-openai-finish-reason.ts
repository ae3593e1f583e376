import type { FinishReason } from '@gw/provider-spec';

/**
 * The spec knows only stop, length and tool_calls. A content filter ended the text normally as far as the
 * caller can act on it, so it maps to stop; the legacy function_call is a tool call.
 */
export function mapOpenAIFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'stop':
    case 'content_filter':
    default:
      return 'stop';
  }
}
