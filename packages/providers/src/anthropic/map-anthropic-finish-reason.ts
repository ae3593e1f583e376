import type { FinishReason } from '@gw/provider-spec';

/**
 * The spec knows only stop, length and tool_calls. A refusal or a paused server-tool turn ended the text as
 * far as the caller can act on it, so both map to stop (a refusal is reported in `message.refusal`).
 */
export function mapAnthropicFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'end_turn':
    case 'stop_sequence':
    case 'refusal':
    case 'pause_turn':
    default:
      return 'stop';
  }
}
