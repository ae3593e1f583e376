import type { NativeEvent, ServerSentEvent, Usage } from '@gw/provider-spec';
import { forwardedEvent, type NativeStreamObserver } from '../http/native-event-stream';
import { unfinishedStreamError } from '../http/upstream-errors';
import { checkUpstreamShape, parseUpstreamJson } from '../http/upstream-json';
import { convertResponsesUsage, responseLifecycleEventSchema } from './openai-responses-api';

const LIFECYCLE = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed']);
/** After one of these the answer is over; an `error` event is the provider's own way of ending it. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

/**
 * Reads id, model and usage from the lifecycle events of an OpenAI Responses stream while the events pass
 * through untouched. Only lifecycle events are parsed; deltas are never looked into.
 */
export class OpenAIResponsesStreamObserver implements NativeStreamObserver {
  private finished = false;
  private seenUsage: Usage | null = null;
  private id = '';
  private model: string;

  constructor(private readonly providerRequestId: string | undefined, requestedModel: string) {
    this.model = requestedModel;
  }

  /** The event to pass on (name and raw data, as sent); throws when a lifecycle event is malformed. */
  observe(event: ServerSentEvent): NativeEvent[] {
    const passed = [forwardedEvent(event)];
    const type = event.event ?? typeFromData(event.data);
    if (type && TERMINAL.has(type)) this.finished = true;
    if (!type || !LIFECYCLE.has(type)) return passed;
    const lifecycle = checkUpstreamShape(parseUpstreamJson(event.data, 'stream event'), responseLifecycleEventSchema, 'stream event');
    const { id, model, usage } = lifecycle.response;
    this.id = id;
    this.model = model;
    if (usage) this.seenUsage = convertResponsesUsage(usage, this.providerRequestId ?? id);
    return passed;
  }

  /** A terminal event went by (`response.completed`, `.incomplete`, `.failed` or `error`): nothing after it counts. */
  complete(): boolean {
    return this.finished;
  }

  /** Called when the stream is over: a stream without a terminal event is a failed call, not a short answer. */
  end(): void {
    if (!this.finished) throw unfinishedStreamError('response');
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
