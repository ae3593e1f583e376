import type { CatalogModel } from '@gw/catalog';
import { checkMessagesContentBlock, checkModality, checkResponsesContentPart } from '../validation/input-parts';
import { checkPromptFits, estimatePromptTokens } from '../validation/prompt-estimate';
import { isObject, type Body } from './body-checks';

/**
 * What the native APIs check against the model once its body is well-formed: media parts it can take (see
 * input-parts) and its prompt limits (see estimatePromptTokens), with the API's own output cap.
 */

export function checkResponsesForModel(body: Body, model: CatalogModel): void {
  const items = Array.isArray(body.input) ? body.input : [];
  items.forEach((item, i) => {
    const content = (item as Body).content;
    if (!Array.isArray(content)) return;
    content.forEach((part, j) => { if (isObject(part)) checkResponsesContentPart(part, model, `input[${i}].content[${j}]`); });
  });
  if (Array.isArray(body.include)) {
    const at = body.include.indexOf('message.input_image.image_url');
    if (at >= 0) checkModality(model, 'image', `include[${at}]`);
  }
  const estimate = estimatePromptTokens([body.instructions, body.input, body.tools], Math.max(items.length, 1));
  const cap = typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined;
  checkPromptFits(model, estimate, 'input', { param: 'max_output_tokens', cap });
}

export function checkMessagesForModel(body: Body, model: CatalogModel): void {
  const messages = body.messages as Body[];
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((block, j) => { if (isObject(block)) checkMessagesContentBlock(block, model, `messages[${i}].content[${j}]`); });
  });
  const cap = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
  checkPromptFits(model, messagesPromptEstimate(body), 'messages', { param: 'max_tokens', cap });
}

/** A messages body's prompt tokens as the gateway estimates them (see estimatePromptTokens). */
export function messagesPromptEstimate(body: Body): number {
  const messages = body.messages as Body[];
  return estimatePromptTokens([body.system, messages, body.tools], messages.length);
}
