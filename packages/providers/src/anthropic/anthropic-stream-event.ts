import { checkUpstreamShape, parseUpstreamJson } from '../http/upstream-json';
import { anthropicStreamEventSchema, type AnthropicStreamEvent } from './anthropic-api';

/**
 * One event of a Messages stream, parsed when its `type` is one of `read`; undefined for any other type, whose
 * data is not checked further (later event types are skipped, as Anthropic's versioning policy asks of clients).
 */
export function parseAnthropicStreamEvent(data: string, read: ReadonlySet<string>): AnthropicStreamEvent | undefined {
  const json = parseUpstreamJson(data, 'stream event');
  const type = (json as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !read.has(type)) return undefined;
  return checkUpstreamShape(json, anthropicStreamEventSchema, 'stream event');
}
