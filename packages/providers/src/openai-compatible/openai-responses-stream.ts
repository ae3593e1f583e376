import { UpstreamError } from '@gw/platform';
import { markRetryable, type NativeEvent, type ServerSentEvent, type Usage } from '@gw/provider-spec';
import { malformedUpstreamError } from '../http/upstream-errors';
import { convertResponsesUsage, responseLifecycleEventSchema } from './openai-responses-api';

const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed']);
/** After one of these the answer is over; an `error` event is the provider's own way of ending it. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/**
 * Reads id, model and usage from the lifecycle events of an OpenAI Responses stream while the events pass
 * through untouched. Only lifecycle events are parsed; deltas are never looked into.
 */
export class OpenAIResponsesStreamObserver {
  private seen = 0;
  private finished = false;
  private seenUsage: Usage | null = null;
  private id = '';
  private model: string;

  constructor(private readonly providerRequestId: string | undefined, requestedModel: string) {
    this.model = requestedModel;
  }

  /** The event to pass on (name and raw data, as sent); throws when a lifecycle event is malformed. */
  observe(event: ServerSentEvent): NativeEvent[] {
    this.seen++;
    const passed: NativeEvent[] = [event.event === undefined ? { data: event.data } : { event: event.event, data: event.data }];
    const type = event.event ?? typeFromData(event.data);
    if (type && TERMINAL.has(type)) this.finished = true;
    if (!type || !LIFECYCLE.has(type)) return passed;
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      throw malformedUpstreamError('stream event');
    }
    const parsed = responseLifecycleEventSchema.safeParse(json);
    if (!parsed.success) throw malformedUpstreamError('stream event');
    const { id, model, usage } = parsed.data.response;
    this.id = id;
    this.model = model;
    if (usage) this.seenUsage = convertResponsesUsage(usage, this.providerRequestId ?? id);
    return passed;
  }

  /** Called when the body ended: a stream without a terminal event is a failed call, not a short answer. */
  end(): void {
    if (!this.finished) {
      throw markRetryable(new UpstreamError('The provider stream ended before the response was finished'), true);
    }
  }

  usage(): Usage | null {
    return this.seenUsage;
  }

  responseId(): string {
    return this.id;
  }

  servedModel(): string {
    return this.model;
  }

  /** OpenAI's in-stream error event, numbered after the events already sent. */
  errorEvent(err: { type: string; message: string }): NativeEvent {
    return { event: 'error', data: JSON.stringify({ type: 'error', code: err.type, message: err.message, param: null, sequence_number: this.seen }) };
  }
}

/** Servers that omit the `event:` line still name the type inside the data. */
function typeFromData(data: string): string | undefined {
  try {
    const type = (JSON.parse(data) as { type?: unknown } | null)?.type;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}
