import { InputError } from '@gw/platform';
import type { ChatContentPart } from '@gw/provider-spec';
import type { GeminiPart } from './gemini-api';

/** Media types Gemini accepts by URL, by file extension; a URL without one of these cannot be typed. */
const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  md: 'text/md',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  aac: 'audio/aac',
  ogg: 'audio/ogg',
  flac: 'audio/flac',
  aiff: 'audio/aiff',
  mp4: 'video/mp4',
  mpeg: 'video/mpeg',
  mpg: 'video/mpeg',
  mov: 'video/mov',
  avi: 'video/avi',
  webm: 'video/webm',
  wmv: 'video/wmv',
  flv: 'video/x-flv',
  '3gp': 'video/3gpp',
};

const AUDIO_FORMATS: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };

/** Content of a user message: text and media parts. `param` names the content for error messages. */
export function convertUserContent(content: string | ChatContentPart[] | null, param: string): GeminiPart[] {
  if (content === null) return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.map((part, j) => convertUserPart(part, `${param}[${j}]`));
}

/** Text of a system, assistant or tool message; those turns carry no media in the chat format. */
export function textOfContent(content: string | ChatContentPart[] | null, param: string): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, j) => {
      const text = part.type === 'text' ? part.text : part.type === 'refusal' ? part.refusal : undefined;
      if (typeof text === 'string') return text;
      throw new InputError(`Content parts of type "${part.type}" are not supported in this message`, `${param}[${j}].type`);
    })
    .join('');
}

function convertUserPart(part: ChatContentPart, param: string): GeminiPart {
  switch (part.type) {
    case 'text':
      return { text: String((part as { text?: unknown }).text ?? '') };
    case 'image_url': {
      const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
      if (typeof url !== 'string') throw new InputError('image_url.url must be a string', `${param}.image_url.url`);
      return convertUrl(url, `${param}.image_url.url`);
    }
    case 'input_audio': {
      const audio = (part as { input_audio?: { data?: unknown; format?: unknown } }).input_audio;
      const mimeType = typeof audio?.format === 'string' ? AUDIO_FORMATS[audio.format] : undefined;
      if (!mimeType) throw new InputError('input_audio.format must be wav or mp3', `${param}.input_audio.format`);
      if (typeof audio?.data !== 'string') throw new InputError('input_audio.data must be base64 audio', `${param}.input_audio.data`);
      return { inlineData: { mimeType, data: audio.data } };
    }
    case 'file': {
      const fileData = (part as { file?: { file_data?: unknown } }).file?.file_data;
      if (typeof fileData !== 'string') throw new InputError('file parts need file_data as a data URL; file ids are not supported by this provider', `${param}.file`);
      return convertUrl(fileData, `${param}.file.file_data`);
    }
    default:
      throw new InputError(`Content parts of type "${part.type}" are not supported by this provider`, `${param}.type`);
  }
}

function convertUrl(url: string, param: string): GeminiPart {
  if (url.startsWith('data:')) return { inlineData: parseDataUrl(url, param) };
  if (url.startsWith('https://') || url.startsWith('http://')) {
    const mimeType = guessMimeType(url);
    if (!mimeType) throw new InputError('Cannot tell the media type of this URL from its file extension; send it as a data URL', param);
    return { fileData: { mimeType, fileUri: url } };
  }
  throw new InputError('URL must be a data URL or an http(s) URL', param);
}

/** `data:<mime>[;param]*[;base64],<data>`; non-base64 payloads are percent-decoded and re-encoded. */
function parseDataUrl(url: string, param: string): { mimeType: string; data: string } {
  const comma = url.indexOf(',');
  if (comma < 0) throw new InputError('Malformed data URL', param);
  const meta = url.slice('data:'.length, comma).split(';');
  const mimeType = meta[0].trim().toLowerCase();
  if (!mimeType.includes('/')) throw new InputError('A data URL must name its media type', param);
  const payload = url.slice(comma + 1);
  if (meta.slice(1).some((m) => m.trim().toLowerCase() === 'base64')) return { mimeType, data: payload };
  try {
    return { mimeType, data: Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64') };
  } catch {
    throw new InputError('Malformed data URL', param);
  }
}

export function guessMimeType(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot < 0 ? undefined : MIME_BY_EXTENSION[name.slice(dot + 1).toLowerCase()];
}
