import type { NativeEvent, ServerSentEvent, Usage } from '@gw/provider-spec';
import { forwardedEvent, type NativeStreamObserver } from '../http/native-event-stream';
import { unfinishedStreamError } from '../http/upstream-errors';
import { anthropicErrorDetail, mapAnthropicStreamError } from './anthropic-error';
import { parseAnthropicStreamEvent } from './anthropic-stream-event';
import { AnthropicStreamUsage } from './convert-anthropic-usage';

/** The only events the passthrough reads; every other event is forwarded without being parsed. */
const READ_EVENTS = new Set(['message_start', 'message_delta', 'message_stop', 'error']);

/**
 * Watches a native Messages stream on its way to the client: forwards each event untouched while reading
 * id, model and usage from message_start and message_delta. An upstream `error` event is thrown as a typed
 * error instead of forwarded, so the gateway reports it once, as the messages format's error event.
 */
export class AnthropicNativeStreamObserver implements NativeStreamObserver {
  private id = '';
  private model = '';
  private stopped = false;
  private readonly usageSeen = new AnthropicStreamUsage();

  constructor(private readonly providerRequestId: string | undefined) {}

  observe(sse: ServerSentEvent): NativeEvent[] {
    const forwarded = forwardedEvent(sse);
    if (sse.event !== undefined && !READ_EVENTS.has(sse.event)) return [forwarded];
    const event = parseAnthropicStreamEvent(sse.data, READ_EVENTS);
    if (!event) return [forwarded];
    if (event.type === 'message_start') {
      this.id = event.message.id;
      this.model = event.message.model;
      this.usageSeen.add(event.message.usage);
    } else if (event.type === 'message_delta') {
      this.usageSeen.add(event.usage);
    } else if (event.type === 'message_stop') {
      this.stopped = true;
    } else if (event.type === 'error') {
      throw mapAnthropicStreamError(anthropicErrorDetail(event.error));
    }
    return [forwarded];
  }

  /** The provider's `message_stop` went by: nothing after it counts. */
  complete(): boolean {
    return this.stopped;
  }

  /** Called when the stream is over: a stream cut off before message_stop is a failed call. */
  end(): void {
    if (!this.stopped) throw unfinishedStreamError();
  }

  usage(): Usage | null {
    return this.usageSeen.current(this.providerRequestId ?? (this.id || undefined));
  }

  responseId(): string {
    return this.id;
  }

  servedModel(): string {
    return this.model;
  }
}
