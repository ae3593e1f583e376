/**
 * The simulator's deterministic "model": the reply and token counts depend only on the request, so tests
 * and benchmarks can predict them.
 */

export interface SimulatedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface SimulatedAnswer {
  /** Reply words; the streamed content is these joined by single spaces. */
  words: string[];
  toolCall?: SimulatedToolCall;
  finishReason: 'stop' | 'length' | 'tool_calls';
  promptTokens: number;
  completionTokens: number;
}

interface SimMessage {
  role?: unknown;
  content?: unknown;
}

export function countWords(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isWhitespace(text.charCodeAt(i));
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
}

export function splitWords(text: string): string[] {
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const space = i === text.length || isWhitespace(text.charCodeAt(i));
    if (space && start >= 0) {
      words.push(text.slice(start, i));
      start = -1;
    } else if (!space && start < 0) start = i;
  }
  return words;
}

function isWhitespace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000;
}

/** Text of a message: a string, or the `text` of its text parts. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    const t = (part as { text?: unknown } | null)?.text;
    if (typeof t === 'string') text += (text ? ' ' : '') + t;
  }
  return text;
}

export function answer(
  messages: unknown[],
  opts: { maxTokens?: number; toolName?: string; callId: string; json?: boolean },
): SimulatedAnswer {
  let promptTokens = 0;
  let lastUser = '';
  for (const m of messages as Array<SimMessage | null>) {
    const text = messageText(m?.content);
    promptTokens += countWords(text);
    if (m?.role === 'user') lastUser = text;
  }
  promptTokens = Math.max(1, promptTokens);

  if (opts.toolName !== undefined) {
    const args = JSON.stringify({ query: lastUser });
    return {
      words: [],
      toolCall: { id: opts.callId, name: opts.toolName, arguments: args },
      finishReason: 'tool_calls',
      promptTokens,
      completionTokens: Math.max(1, countWords(args)),
    };
  }

  // JSON mode (`response_format` json_object / json_schema) answers one JSON object as a single "word".
  let words = opts.json ? [JSON.stringify({ echo: lastUser })] : ['Echo:', ...splitWords(lastUser)];
  let finishReason: SimulatedAnswer['finishReason'] = 'stop';
  if (opts.maxTokens !== undefined && words.length > opts.maxTokens) {
    words = words.slice(0, opts.maxTokens);
    finishReason = 'length';
  }
  return { words, finishReason, promptTokens, completionTokens: words.length };
}
