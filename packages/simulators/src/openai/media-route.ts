import type * as http from 'node:http';
import { wavDurationSeconds, wavOf } from '@gw/provider-spec';
import { answerModelKnob, later, sendJson } from '../http-kit';
import { PCM_RATE, samplePng, tonePcm } from './media-samples';
import { openAIErrorBody, simulatedErrorBody } from './openai-wire';

/**
 * OpenAI's images and audio APIs, simulated: `POST /v1/images/generations` (JSON), `POST /v1/images/edits`
 * (multipart `image[]`, `mask`), `POST /v1/audio/transcriptions` (multipart `file`) and `POST /v1/audio/speech`.
 * Images are real PNGs (b64_json, or a URL this simulator serves); speech is a real tone whose length follows
 * the text; a transcription says it is simulated and measures the WAV it was given.
 * Model knobs: `sim-error-<status>` fails the call, `sim-image-partial-failure` fails every second image in place
 * (`data[].error`), `sim-fixture-<name>` replays a fixture; `x-sim-latency-ms` (or the handler's latency) slows it.
 */
export const MEDIA_PATHS = new Set(['/v1/images/generations', '/v1/images/edits', '/v1/audio/transcriptions', '/v1/audio/speech']);
export const IMAGE_FILE_PREFIX = '/v1/__simulator/images/';

const SPEECH_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };
/** Speech length: about fifteen characters a second, at speed 1. */
const CHARS_PER_SECOND = 15;

export function createMediaRoutes(opts: { latencyMs: (req: http.IncomingMessage) => number; fixtures: Parameters<typeof answerModelKnob>[3]; baseUrl: (req: http.IncomingMessage) => string }) {
  let calls = 0;
  const served = new Map<string, Buffer>();

  async function route(req: http.IncomingMessage, res: http.ServerResponse, path: string, raw: Buffer): Promise<void> {
    const multipart = (req.headers['content-type'] ?? '').startsWith('multipart/form-data');
    let fields: Record<string, unknown>;
    let files: Record<string, { bytes: Buffer; type: string; name: string }[]> = {};
    try {
      ({ fields, files } = multipart ? await readForm(req, raw) : { fields: JSON.parse(raw.toString('utf8')) as Record<string, unknown>, files: {} });
      if (typeof fields !== 'object' || fields === null) throw new Error('not an object');
    } catch {
      return sendJson(res, 400, openAIErrorBody('We could not parse the body of your request.', 'invalid_request_error', null, null));
    }
    const model = typeof fields.model === 'string' ? fields.model : '';
    if (!model) return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'model'.", 'invalid_request_error', 'model', 'missing_required_parameter'));
    const latency = opts.latencyMs(req);
    if (answerModelKnob(res, model, latency, opts.fixtures, { errorBody: (status) => simulatedErrorBody(status, model) })) return;
    const id = ++calls;
    const requestId = `req_simmedia${id.toString(36).padStart(8, '0')}`;
    if (path === '/v1/images/generations' || path === '/v1/images/edits') return later(res, latency, () => images(req, res, fields, files, model, requestId, path.endsWith('edits')));
    if (path === '/v1/audio/transcriptions') return later(res, latency, () => transcription(res, fields, files, model, requestId));
    later(res, latency, () => speech(res, fields, requestId));
  }

  function images(req: http.IncomingMessage, res: http.ServerResponse, f: Record<string, unknown>, files: Record<string, { bytes: Buffer }[]>, model: string, requestId: string, edit: boolean): void {
    const prompt = typeof f.prompt === 'string' ? f.prompt : '';
    if (!prompt) return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'prompt'.", 'invalid_request_error', 'prompt', 'missing_required_parameter'));
    const inputs = files['image[]'] ?? files.image ?? [];
    if (edit && inputs.length === 0) return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'image'.", 'invalid_request_error', 'image', 'missing_required_parameter'));
    const n = Number(f.n ?? 1);
    if (!Number.isInteger(n) || n < 1 || n > 10) return sendJson(res, 400, openAIErrorBody('Invalid n: expected an integer from 1 to 10.', 'invalid_request_error', 'n', 'invalid_value'));
    const format = typeof f.output_format === 'string' ? f.output_format : 'png';
    const size = typeof f.size === 'string' && f.size !== 'auto' ? f.size : '1024x1024';
    const seed = `${prompt}|${inputs.map((i) => i.bytes.length).join(',')}|${files.mask ? 'mask' : ''}`;
    const created = Math.floor(Date.now() / 1000);
    const usage = { input_tokens: prompt.split(/\s+/).length + inputs.length * 65, output_tokens: 272 * n, total_tokens: prompt.split(/\s+/).length + inputs.length * 65 + 272 * n, input_tokens_details: { text_tokens: prompt.split(/\s+/).length, image_tokens: inputs.length * 65 } };
    if (f.stream === true || f.stream === 'true') {
      const partials = Math.max(0, Math.min(3, Number(f.partial_images ?? 0)));
      const prefix = edit ? 'image_edit' : 'image_generation';
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
      for (let i = 0; i < n; i++) {
        for (let p = 0; p < partials; p++) {
          res.write(`event: ${prefix}.partial_image\ndata: ${JSON.stringify({ type: `${prefix}.partial_image`, b64_json: samplePng(`${seed}|${i}`, 16, 16, 40 * (partials - p)).toString('base64'), created_at: created, size, output_format: format, partial_image_index: p })}\n\n`);
        }
        res.write(`event: ${prefix}.completed\ndata: ${JSON.stringify({ type: `${prefix}.completed`, b64_json: samplePng(`${seed}|${i}`).toString('base64'), created_at: created, size, output_format: format, ...(i === n - 1 ? { usage } : {}) })}\n\n`);
      }
      return void res.end();
    }
    const asUrl = f.response_format === 'url';
    const data = Array.from({ length: n }, (_, i) => {
      if (model === 'sim-image-partial-failure' && i % 2 === 1) return { error: { code: 'content_policy_violation', message: `Image ${i} was rejected by the simulated safety system.` } };
      const png = samplePng(`${seed}|${i}`);
      if (!asUrl) return { b64_json: png.toString('base64'), revised_prompt: prompt };
      const name = `${requestId}-${i}.png`;
      served.set(name, png);
      return { url: `${opts.baseUrl(req)}${IMAGE_FILE_PREFIX}${name}`, revised_prompt: prompt };
    });
    sendJson(res, 200, { created, data, background: f.background ?? 'opaque', output_format: format, quality: f.quality ?? 'medium', size, usage }, { 'x-request-id': requestId });
  }

  function transcription(res: http.ServerResponse, f: Record<string, unknown>, files: Record<string, { bytes: Buffer; type: string; name: string }[]>, model: string, requestId: string): void {
    const file = files.file?.[0];
    if (!file) return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'file'.", 'invalid_request_error', 'file', 'missing_required_parameter'));
    const seconds = wavDurationSeconds(file.bytes);
    if (seconds === null) return sendJson(res, 400, openAIErrorBody('The simulated recognizer reads PCM WAV audio only.', 'invalid_request_error', 'file', 'invalid_value'));
    const duration = Math.round(seconds * 100) / 100;
    const text = `Simulated transcription of ${duration} seconds of audio.`;
    const format = typeof f.response_format === 'string' ? f.response_format : 'json';
    const usage = model.startsWith('whisper') ? { type: 'duration', seconds: Math.ceil(seconds) } : { type: 'tokens', input_tokens: Math.ceil(seconds * 10), output_tokens: text.split(' ').length, total_tokens: Math.ceil(seconds * 10) + text.split(' ').length };
    if (f.stream === 'true') {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': requestId });
      for (const word of text.split(' ')) res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta: `${word} ` })}\n\n`);
      res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text, usage })}\n\n`);
      return;
    }
    if (format === 'text' || format === 'srt' || format === 'vtt') {
      const body = format === 'text' ? text : format === 'srt' ? `1\n00:00:00,000 --> ${clock(seconds, ',')}\n${text}\n` : `WEBVTT\n\n00:00:00.000 --> ${clock(seconds, '.')}\n${text}\n`;
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-request-id': requestId });
      return void res.end(body);
    }
    if (format === 'verbose_json') {
      const half = Math.round((seconds / 2) * 100) / 100;
      const [a, b] = [text.split(' ').slice(0, 3).join(' '), text.split(' ').slice(3).join(' ')];
      return sendJson(res, 200, {
        task: 'transcribe', language: typeof f.language === 'string' ? f.language : 'english', duration, text,
        segments: [
          { id: 0, seek: 0, start: 0, end: half, text: a, tokens: [50364], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 },
          { id: 1, seek: 0, start: half, end: duration, text: b, tokens: [50365], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 },
        ],
        usage: { type: 'duration', seconds: Math.ceil(seconds) },
      }, { 'x-request-id': requestId });
    }
    sendJson(res, 200, { text, usage }, { 'x-request-id': requestId });
  }

  function speech(res: http.ServerResponse, f: Record<string, unknown>, requestId: string): void {
    const input = typeof f.input === 'string' ? f.input : '';
    if (!input) return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'input'.", 'invalid_request_error', 'input', 'missing_required_parameter'));
    if (typeof f.voice !== 'string' || !f.voice) return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'voice'.", 'invalid_request_error', 'voice', 'missing_required_parameter'));
    const format = typeof f.response_format === 'string' ? f.response_format : 'mp3';
    if (!Object.hasOwn(SPEECH_TYPES, format)) return sendJson(res, 400, openAIErrorBody(`Invalid response_format '${format}'.`, 'invalid_request_error', 'response_format', 'invalid_value'));
    const speed = typeof f.speed === 'number' ? f.speed : 1;
    const pcm = tonePcm(Math.max(0.2, input.length / CHARS_PER_SECOND / speed));
    // The simulator encodes PCM only: every format but `pcm` carries it in a WAV container.
    const audio = format === 'pcm' ? pcm : wavOf(pcm, PCM_RATE);
    res.writeHead(200, { 'content-type': SPEECH_TYPES[format], 'transfer-encoding': 'chunked', 'x-request-id': requestId });
    // Sent in pieces, as a real speech API streams audio while it synthesizes.
    let offset = 0;
    const timer = setInterval(() => {
      res.write(audio.subarray(offset, offset + 16_384));
      offset += 16_384;
      if (offset >= audio.length) {
        clearInterval(timer);
        res.end();
      }
    }, 10);
    res.once('close', () => clearInterval(timer));
  }

  function serveImage(res: http.ServerResponse, path: string): void {
    const png = served.get(path.slice(IMAGE_FILE_PREFIX.length));
    if (!png) return sendJson(res, 404, openAIErrorBody('No such image.', 'invalid_request_error', null, null));
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
    res.end(png);
  }

  return { route, serveImage };
}

function clock(seconds: number, sep: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${sep}${pad(ms % 1000, 3)}`;
}

/** Multipart fields and files, parsed the way the fetch API does. */
async function readForm(req: http.IncomingMessage, raw: Buffer) {
  const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': req.headers['content-type']! } }).formData();
  // Without a prototype, a part named __proto__ or constructor is an entry like any other.
  const fields: Record<string, unknown> = Object.create(null);
  const files: Record<string, { bytes: Buffer; type: string; name: string }[]> = Object.create(null);
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') fields[name] = value;
    else (files[name] ??= []).push({ bytes: Buffer.from(await value.arrayBuffer()), type: value.type, name: value.name });
  }
  return { fields, files };
}
