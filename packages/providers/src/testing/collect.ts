// Test-only helpers for reading what a provider streams.
import { isRetryableUpstreamError, type ChatCompletionChunk } from '@gw/provider-spec';

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Collects what arrived before the iteration failed, and the failure. */
export async function collectUntilError<T>(items: AsyncIterable<T>): Promise<{ received: T[]; error: unknown }> {
  const received: T[] = [];
  try {
    for await (const item of items) received.push(item);
  } catch (error) {
    return { received, error };
  }
  throw new Error('stream did not fail');
}

/** Joins the tool call fragments of the first choice by index, as a client would. */
export function joinToolCalls(chunks: ChatCompletionChunk[]): Array<{ id?: string; name?: string; arguments: string }> {
  const calls: Array<{ id?: string; name?: string; arguments: string }> = [];
  for (const chunk of chunks) {
    for (const fragment of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = (calls[fragment.index] ??= { arguments: '' });
      if (fragment.id) call.id = fragment.id;
      if (fragment.function?.name) call.name = fragment.function.name;
      call.arguments += fragment.function?.arguments ?? '';
    }
  }
  return calls;
}

/** A failure as the gateway must see it: its error class, its fields, and whether another deployment may be tried. */
export function expectTypedFailure(err: unknown, type: abstract new (...args: never[]) => unknown, fields: Record<string, unknown>, retryable: boolean): void {
  expect(err).toBeInstanceOf(type);
  expect(err).toMatchObject(fields);
  expect(isRetryableUpstreamError(err)).toBe(retryable);
}
