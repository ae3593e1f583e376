import { InputError } from '@gw/platform';
import type { CatalogModel } from '@gw/catalog';

/**
 * A prompt's token count without the model's tokenizer (models differ, and none can be fetched at run time):
 * the larger of
 *  - the whitespace-separated words: BPE tokenizers split text into words before merging pieces, so a word
 *    is at least one token;
 *  - the UTF-8 bytes / 5: English prose averages 4-5 bytes per token;
 * plus 4 tokens per message or input item for its role and separators. Media (image, audio and file data,
 * URLs) and structural strings (`type`, `role`, ids) are not counted. The estimate errs low for code and
 * non-Latin scripts, which take more tokens per byte: it refuses only prompts clearly over a limit, and the
 * provider still judges the exact count.
 */
const BYTES_PER_TOKEN = 5;
const TOKENS_PER_MESSAGE = 4;
const NOT_TEXT = new Set([
  'type', 'role', 'id', 'call_id', 'tool_call_id', 'status', 'detail', 'cache_control', 'format', 'media_type',
  'image_url', 'input_audio', 'file', 'file_id', 'file_data', 'file_url', 'source', 'url', 'data', 'audio',
]);

/** What a regular expression's `\s` matches: ECMAScript's white space and line terminators. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029
    || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** The runs of non-space characters in `text`, as `text.split(/\s+/)` finds them, without building the array. */
export function countWords(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
}

export function estimatePromptTokens(parts: unknown[], messageCount: number): number {
  let words = 0;
  let bytes = 0;
  const stack: unknown[] = [...parts];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      bytes += Buffer.byteLength(node, 'utf8');
      words += countWords(node);
    } else if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
    } else if (typeof node === 'object' && node !== null) {
      for (const [key, value] of Object.entries(node)) if (!NOT_TEXT.has(key)) stack.push(value);
    }
  }
  return Math.max(words, Math.ceil(bytes / BYTES_PER_TOKEN)) + TOKENS_PER_MESSAGE * messageCount;
}

/**
 * The model's prompt limit (`per_request_limits.prompt_tokens`) and context window (`context_length`, prompt
 * plus the requested output cap) hold: a 400 naming the prompt's param, or the output cap's when the two
 * together overflow the window.
 */
export function checkPromptFits(model: CatalogModel, estimate: number, promptParam: string, output: { param: string; cap: number | undefined }): void {
  const promptLimit = model.per_request_limits.prompt_tokens;
  if (promptLimit !== null && estimate > promptLimit) {
    throw new InputError(`The prompt is about ${estimate} tokens (estimated), over the ${promptLimit}-token prompt limit of model ${model.id}`, promptParam, 'context_length_exceeded');
  }
  const window = model.context_length;
  if (window === null) return;
  if (estimate > window) {
    throw new InputError(`The prompt is about ${estimate} tokens (estimated), over the ${window}-token context of model ${model.id}`, promptParam, 'context_length_exceeded');
  }
  if (output.cap !== undefined && estimate + output.cap > window) {
    throw new InputError(
      `The prompt (about ${estimate} tokens, estimated) plus ${output.param}=${output.cap} exceed the ${window}-token context of model ${model.id}`,
      output.param, 'context_length_exceeded',
    );
  }
}
