import { InputError } from '@gw/platform';
import type { CatalogModel } from '@gw/catalog';

/**
 * Media input a model must be able to take, refused with a 400 instead of being dropped (or sent and billed)
 * when it cannot: the part needs an input modality of the model (Model `architecture.input_modalities`), a
 * well-formed URL or data URL, and no `file_id` (this gateway keeps no files, so every file id is unknown).
 */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(param: string, message: string, code = 'invalid_request'): never {
  throw new InputError(message, param, code);
}

/** A data URL of the given media kind with a base64 payload, e.g. `data:image/png;base64,iVBOR...`. */
function isBase64DataUrl(url: string, kind: 'image' | 'any'): boolean {
  const match = /^data:([a-z]+)\/[a-z0-9.+-]+;base64,([A-Za-z0-9+/]*={0,2})$/i.exec(url);
  if (!match) return false;
  return (kind === 'any' || match[1]!.toLowerCase() === kind) && match[2]!.length > 0 && match[2]!.length % 4 === 0;
}

function isHttpUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

export function checkModality(model: CatalogModel, modality: string, param: string): void {
  if (!model.architecture.input_modalities.includes(modality)) {
    fail(param, `Model ${model.id} does not take ${modality} input (input modalities: ${model.architecture.input_modalities.join(', ')})`, 'unsupported_input');
  }
}

export function checkImageUrl(url: unknown, param: string): void {
  if (typeof url !== 'string' || !(isHttpUrl(url) || isBase64DataUrl(url, 'image'))) {
    fail(param, `${param} must be an http(s) URL or a data:image/...;base64, URL`);
  }
}

export function checkFileData(data: unknown, param: string): void {
  if (typeof data !== 'string' || !isBase64DataUrl(data, 'any')) fail(param, `${param} must be a data:<media type>;base64, URL`);
}

export function refuseFileId(fileId: unknown, param: string): void {
  if (fileId !== undefined && fileId !== null) fail(param, `Unknown ${param} '${String(fileId)}': this gateway stores no files; send the content inline`, 'file_not_found');
}

/** Chat content parts (`messages[i].content[j]`). */
export function checkChatContentPart(part: Record<string, unknown>, model: CatalogModel, p: string): void {
  switch (part.type) {
    case 'text':
      if (typeof part.text !== 'string') fail(`${p}.text`, `${p}.text must be a string`);
      return;
    case 'refusal':
      return;
    case 'image_url': {
      checkModality(model, 'image', `${p}.type`);
      const image = part.image_url;
      if (!isObject(image)) fail(`${p}.image_url`, `${p}.image_url must be an object with a url`);
      checkImageUrl(image.url, `${p}.image_url.url`);
      return;
    }
    case 'input_audio':
      checkModality(model, 'audio', `${p}.type`);
      if (!isObject(part.input_audio) || typeof part.input_audio.data !== 'string') fail(`${p}.input_audio.data`, `${p}.input_audio.data must be a base64 string`);
      return;
    case 'file': {
      checkModality(model, 'file', `${p}.type`);
      const file = part.file;
      if (!isObject(file)) fail(`${p}.file`, `${p}.file must be an object`);
      refuseFileId(file.file_id, `${p}.file.file_id`);
      checkFileData(file.file_data, `${p}.file.file_data`);
      return;
    }
    default:
      fail(`${p}.type`, `${p}.type must be one of text, image_url, input_audio, file`);
  }
}

/** Responses input content parts (`input[i].content[j]`). */
export function checkResponsesContentPart(part: Record<string, unknown>, model: CatalogModel, p: string): void {
  switch (part.type) {
    case 'input_image':
      checkModality(model, 'image', `${p}.type`);
      refuseFileId(part.file_id, `${p}.file_id`);
      checkImageUrl(part.image_url, `${p}.image_url`);
      return;
    case 'input_file':
      checkModality(model, 'file', `${p}.type`);
      refuseFileId(part.file_id, `${p}.file_id`);
      if (part.file_url !== undefined) {
        if (typeof part.file_url !== 'string' || !isHttpUrl(part.file_url)) fail(`${p}.file_url`, `${p}.file_url must be an http(s) URL`);
      } else {
        checkFileData(part.file_data, `${p}.file_data`);
      }
      return;
    case 'input_audio':
      checkModality(model, 'audio', `${p}.type`);
      return;
    default:
  }
}

/** Messages API content blocks (`messages[i].content[j]`). */
export function checkMessagesContentBlock(block: Record<string, unknown>, model: CatalogModel, p: string): void {
  if (block.type !== 'image' && block.type !== 'document') return;
  checkModality(model, block.type === 'image' ? 'image' : 'file', `${p}.type`);
  const source = block.source;
  if (!isObject(source)) fail(`${p}.source`, `${p}.source must be an object`);
  if (source.type === 'url') {
    if (typeof source.url !== 'string' || !isHttpUrl(source.url)) fail(`${p}.source.url`, `${p}.source.url must be an http(s) URL`);
  } else if (source.type === 'file') {
    refuseFileId(source.file_id, `${p}.source.file_id`);
  } else if (source.type === 'base64') {
    const data = source.data;
    if (typeof data !== 'string' || data.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) fail(`${p}.source.data`, `${p}.source.data must be base64`);
  }
}
