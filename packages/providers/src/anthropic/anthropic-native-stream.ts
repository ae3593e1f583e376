import { UpstreamError } from '@gw/platform';
import { markRetryable, type NativeEvent, type ServerSentEvent, type Usage } from '@gw/provider-spec';
import { malformedUpstreamError } from '../http/upstream-errors';
import { anthropicStreamEventSchema } from './anthropic-api';
import { mapAnthropicStreamError } from './anthropic-error';
import { AnthropicStreamUsage } from './convert-anthropic-usage';

/** The only events the passthrough reads; every other event is forwarded without being parsed. */
const READ_EVENTS = new Set(['message_start', 'message_delta', 'message_stop', 'error']);

/**
 * Watches a native Messages stream on its way to the client: forwards each event untouched while reading
 * id, model and usage from message_start and message_delta. An upstream `error` event is thrown as a typed
 * error instead of forwarded, so the gateway reports it once, through `anthropicErrorEvent`.
 */
export class AnthropicNativeStreamObserver {
  id = '';
  model = '';
  private stopped = false;
  private readonly usageSeen = new AnthropicStreamUsage();

  constructor(private readonly providerRequestId: string | undefined) {}

  observe(sse: ServerSentEvent): NativeEvent[] {
    const forwarded: NativeEvent = sse.event === undefined ? { data: sse.data } : { event: sse.event, data: sse.data };
    if (sse.event !== undefined && !READ_EVENTS.has(sse.event)) return [forwarded];
    let json: unknown;
    try {
      json = JSON.parse(sse.data);
    } catch {
      throw malformedUpstreamError('stream event');
    }
    const type = (json as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !READ_EVENTS.has(type)) return [forwarded];
    const parsed = anthropicStreamEventSchema.safeParse(json);
    if (!parsed.success) throw malformedUpstreamError('stream event');
    const event = parsed.data;
    if (event.type === 'message_start') {
      this.id = event.message.id;
      this.model = event.message.model;
      this.usageSeen.add(event.message.usage);
    } else if (event.type === 'message_delta') {
      this.usageSeen.add(event.usage);
    } else if (event.type === 'message_stop') {
      this.stopped = true;
    } else if (event.type === 'error') {
      const { type: errorType, message } = event.error;
      throw mapAnthropicStreamError({ type: errorType ?? undefined, message: message ?? undefined, param: null, code: null });
    }
    return [forwarded];
  }

  /** Called when the body ended: a stream cut off before message_stop is a failed call. */
  end(): void {
    if (!this.stopped) throw markRetryable(new UpstreamError('The provider stream ended before the answer was finished'), true);
  }

  usage(): Usage | null {
    return this.usageSeen.current(this.providerRequestId ?? (this.id || undefined));
  }
}

/** Gateway error types in Anthropic's vocabulary, so Anthropic clients recognise an error the gateway raised. */
const ANTHROPIC_ERROR_TYPE: Record<string, string> = {
  upstream_error: 'api_error',
  api_error: 'api_error',
  service_unavailable_error: 'overloaded_error',
  insufficient_balance_error: 'billing_error',
};

/** Anthropic's in-stream error: `event: error` with `{type: 'error', error: {type, message}}`. */
export function anthropicErrorEvent(err: { type: string; message: string }): NativeEvent {
  const type = ANTHROPIC_ERROR_TYPE[err.type] ?? err.type;
  return { event: 'error', data: JSON.stringify({ type: 'error', error: { type, message: err.message } }) };
}
