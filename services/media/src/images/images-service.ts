import { Readable } from 'node:stream';
import type { BlobStore } from '@gw/blobs';
import type { CallArchiver } from '@gw/call-archive';
import { InputError, NotFoundError, parseKeyValueMetadata, toGatewayError, type EventStreamWriter, type Identity } from '@gw/platform';
import type { GeneratedImage, ImageRequest, ImageResult, ImageStreamEvent, ImageUsage, MediaInput } from '@gw/provider-spec';
import { listPage, type Collection, type PageQuery } from '@gw/store';
import { blobReader, type BlobReader } from '../blob-answer';
import type { MediaBilledCalls, MediaPlan, MediaUsage } from '../calls/media-billed-calls';
import type { MediaRoute, MediaRouter } from '../calls/media-routes';
import type { SignedUrls } from '../signed-urls';
import { checkFields, routesHonouring } from '../validation/request-fields';
import { GATEWAY_IMAGE_FIELDS, IMAGE_BASE_FIELDS, IMAGE_FIELDS, MAX_INPUT_IMAGES } from './image-fields';
import type { ImageInputs } from './image-inputs';
import { imageBlobKey, imageMimeType, newImageId, toImageObject, type ImageObject, type ImageRecord } from './image-records';

/** Images given as files (a multipart edit) rather than named in the body. */
export interface ImageFiles {
  images: MediaInput[];
  mask?: MediaInput;
}

interface PreparedImages {
  req: ImageRequest;
  plan: MediaPlan;
  model: string;
  responseFormat: 'url' | 'b64_json';
  metadata: Record<string, string> | null;
  stream: boolean;
  /** The request as the caller gave it (input files with their bytes, which the archive describes), for the archive. */
  request: Record<string, unknown>;
}

/** A provider's image stream event, with the record a final image was stored as. */
interface StoredImageEvent {
  event: ImageStreamEvent;
  record: ImageRecord | null;
}

/** The spec's Image generation result. */
export interface ImageAnswer {
  created: number;
  model: string;
  data: ({ id?: string; url?: string; b64_json?: string; output_format: string; size?: string; revised_prompt?: string; error: { code: string; message: string } | null })[];
  usage: ImageUsage;
  error?: { code: string; message: string };
}

const NOT_SENT = new Set<string>([...IMAGE_BASE_FIELDS, ...GATEWAY_IMAGE_FIELDS, 'images', 'mask', 'stream']);

/**
 * Image generation and editing (one endpoint; input images make it an edit), answered in the same request,
 * every image stored through the blob port as an image record of the account; the records' list, download
 * and delete.
 */
export class ImagesService {
  constructor(private readonly deps: {
    router: MediaRouter;
    calls: MediaBilledCalls;
    records: Collection<ImageRecord>;
    blobs: BlobStore;
    inputs: ImageInputs;
    signedUrls: SignedUrls;
    archive: CallArchiver;
  }) {}

  async prepare(identity: Identity, body: Record<string, unknown>, files: ImageFiles | null): Promise<PreparedImages> {
    const { model, routes } = this.deps.router.model(body.model, 'image');
    checkFields(body, IMAGE_FIELDS, model, IMAGE_BASE_FIELDS);
    if (typeof body.prompt !== 'string' || body.prompt.trim() === '') throw new InputError('prompt is required', 'prompt', 'missing_required_parameter');
    // Kept on every image record the call makes: string pairs within OpenAI's bounds, not any object.
    const metadata = parseKeyValueMetadata(body.metadata);
    const responseFormat = body.response_format ?? 'url';
    if (responseFormat !== 'url' && responseFormat !== 'b64_json') throw new InputError('response_format must be url or b64_json', 'response_format', 'invalid_value');
    const images = files?.images ?? await this.namedInputs(identity.accountId, body.images);
    const mask = files?.mask ?? (body.mask === undefined ? undefined : await this.deps.inputs.resolve(identity.accountId, body.mask, 'mask'));
    if (mask && images.length === 0) throw new InputError('mask edits an input image: give images too', 'mask', 'missing_required_parameter');
    if (images.length > MAX_INPUT_IMAGES) throw new InputError(`At most ${MAX_INPUT_IMAGES} input images`, 'images', 'invalid_value');
    const edit = images.length > 0;
    const stream = body.stream === true;
    const set = Object.keys(body).filter((f) => body[f] !== undefined && !NOT_SENT.has(f));
    if (edit) set.push('images');
    if (mask) set.push('mask');
    if (stream) set.push('stream');
    const serving = routesHonouring(routes.filter((r) => r.provider.images), set, (r) => {
      const caps = r.provider.capabilities;
      return [...(edit ? caps.imageEdit : caps.imageGeneration).filter((f) => f !== 'stream' || caps.imageStream)];
    });
    const params = Object.fromEntries(Object.entries(body).filter(([f, v]) => v !== undefined && !NOT_SENT.has(f)));
    const n = typeof body.n === 'number' ? body.n : 1;
    const prompt = body.prompt;
    return {
      req: { prompt, n, params, images, ...(mask ? { mask } : {}) },
      plan: {
        routes: serving,
        bounds: {
          promptTokens: Math.ceil(Buffer.byteLength(prompt) / 3) + images.length * 1_000,
          outputTokens: (model.per_request_limits.completion_tokens ?? 0) * n,
          images: n, audioSeconds: 0, videoSeconds: 0,
        },
      },
      model: model.id, responseFormat, stream,
      metadata,
      request: files ? { ...body, image: files.images, ...(files.mask ? { mask: files.mask } : {}) } : body,
    };
  }

  /** Generates (or edits), stores each image, bills the call, and answers the spec's result. */
  async generate(identity: Identity, traceId: string, p: PreparedImages): Promise<{ requestId: string; answer: ImageAnswer }> {
    const startedAtMs = Date.now();
    const { requestId, result } = await this.deps.calls.call<{ result: ImageResult; stored: (ImageRecord | null)[] }>({
      apiType: 'image', identity, traceId, model: p.model, plan: p.plan,
      send: async (route, id) => {
        const result = await route.provider.images!(this.forRoute(p.req, route), route.target);
        return { result, stored: await Promise.all(result.images.map((img, i) => this.store(identity.accountId, id, p, img, i))) };
      },
      usageOf: ({ result, stored }) => ({
        usage: { ...result.usage, media_ids: stored.filter((r): r is ImageRecord => r !== null).map((r) => r._id) },
        providerResponseId: result.providerResponseId, servedModel: result.servedModel, finishReason: result.error ? 'error' : 'stop',
      }),
    });
    const answer: ImageAnswer = {
      created: result.result.created,
      model: result.result.servedModel,
      data: result.result.images.map((img, i) => this.item(img, result.stored[i], p.responseFormat)),
      usage: p.req.images.length > 0 ? { ...result.result.usage, input_images: p.req.images.length } : result.result.usage,
      ...(result.result.error ? { error: result.result.error } : {}),
    };
    this.deps.archive.record({
      requestId, identity, apiType: 'image', model: p.model, providerResponseId: result.result.providerResponseId, streamed: false, request: p.request,
      response: { ...answer, data: answer.data.map((item, i) => archivedItem(item, result.stored[i])) }, startedAtMs, traceId,
    });
    return { requestId, answer };
  }

  /**
   * Streams partial renders and final images as OpenAI's image stream events. Each final image is stored before
   * it is passed on, so the journal bills it (with its record id) even if this instance dies right after.
   */
  async stream(identity: Identity, traceId: string, p: PreparedImages, writer: (requestId: string) => EventStreamWriter): Promise<void> {
    const edit = p.req.images.length > 0;
    const prefix = edit ? 'image_edit' : 'image_generation';
    const stored: string[] = [];
    let requestId = '';
    const startedAtMs = Date.now();
    // Set by the stream's callbacks: the assertion keeps TypeScript from narrowing it to null below.
    let done = null as Extract<ImageStreamEvent, { type: 'done' }> | null;
    const soFar = (): MediaUsage => (done ? { ...done.usage, media_ids: [...stored] } : { generated_images: stored.length, media_ids: [...stored] });
    const billed = await this.deps.calls.stream<AsyncIterable<ImageStreamEvent>, StoredImageEvent>({
      apiType: 'image', identity, traceId, model: p.model, plan: p.plan, promptChars: p.req.prompt.length, openingUsage: soFar(),
      open: (route, id) => {
        requestId = id;
        return route.provider.imagesStream!(this.forRoute(p.req, route), route.target);
      },
      items: (s) => this.storedEvents(s, identity.accountId, () => requestId, p, (record) => stored.push(record._id), (e) => { done = e; }),
      progress: () => ({ chars: 0, providerResponseId: '', servedModel: '', usage: soFar() }),
      usageOf: () => ({
        usage: soFar(), providerResponseId: done?.providerResponseId ?? '', servedModel: done?.servedModel ?? '', finishReason: done ? 'stop' : 'error',
      }),
    });
    const out = writer(billed.requestId);
    out.open();
    let cancelled = false;
    let failed = false;
    try {
      for await (const { event: e, record } of billed.items) {
        if (e.type === 'partial') {
          out.event({ event: `${prefix}.partial_image`, data: JSON.stringify({ type: `${prefix}.partial_image`, b64_json: e.b64Json, partial_image_index: e.partialIndex, output_format: e.outputFormat, size: e.size, created_at: Math.floor(Date.now() / 1000) }) });
        } else if (e.type === 'completed') {
          out.event({ event: `${prefix}.completed`, data: JSON.stringify({ type: `${prefix}.completed`, id: record?._id, b64_json: e.image.b64Json, output_format: e.image.outputFormat, size: e.image.size, created_at: Math.floor(Date.now() / 1000) }) });
        }
        cancelled = out.clientGone;
      }
      out.end();
    } catch (err) {
      // After the first byte a failure is the stream's own error event; what was stored is still billed.
      failed = true;
      out.fail(toGatewayError(err), traceId);
    } finally {
      billed.finish({ cancelled, failed });
      this.deps.archive.record({
        requestId: billed.requestId, identity, apiType: 'image', model: p.model, providerResponseId: done?.providerResponseId ?? '', streamed: true,
        request: p.request, response: { data: stored.map((id) => ({ id })), usage: done?.usage ?? null, completed: done !== null }, startedAtMs, traceId,
      });
    }
  }

  /** The provider's stream events, each final image stored as a record first. */
  private async *storedEvents(events: AsyncIterable<ImageStreamEvent>, accountId: string, requestId: () => string, p: PreparedImages,
    onStored: (record: ImageRecord) => void, onDone: (e: Extract<ImageStreamEvent, { type: 'done' }>) => void): AsyncGenerator<StoredImageEvent> {
    for await (const event of events) {
      if (event.type === 'done') onDone(event);
      const record = event.type === 'completed' ? await this.store(accountId, requestId(), p, event.image, event.index) : null;
      if (record) onStored(record);
      yield { event, record };
    }
  }

  async list(accountId: string, page: PageQuery) {
    return listPage(this.deps.records, { account_id: accountId }, page, toImageObject);
  }

  async get(accountId: string, id: string): Promise<ImageObject> {
    return toImageObject(await this.record(accountId, id));
  }

  async content(accountId: string, id: string): Promise<{ record: ImageRecord; read: BlobReader }> {
    const record = await this.record(accountId, id);
    return { record, read: blobReader(this.deps.blobs, record.blob_key, () => new NotFoundError(`No image '${id}'`, 'image_id', 'image_not_found')) };
  }

  async delete(accountId: string, id: string): Promise<{ id: string; object: 'image.deleted'; deleted: true }> {
    const record = await this.record(accountId, id);
    await this.deps.records.deleteOne({ _id: record._id, account_id: accountId });
    await this.deps.blobs.delete(record.blob_key);
    return { id: record._id, object: 'image.deleted', deleted: true };
  }

  private async record(accountId: string, id: string): Promise<ImageRecord> {
    const record = await this.deps.records.findOne({ _id: id, account_id: accountId });
    if (!record) throw new NotFoundError(`No image '${id}'`, 'image_id', 'image_not_found');
    return record;
  }

  private async namedInputs(accountId: string, images: unknown): Promise<MediaInput[]> {
    if (images === undefined) return [];
    return Promise.all((images as unknown[]).map((ref, i) => this.deps.inputs.resolve(accountId, ref, `images[${i}]`)));
  }

  /** The route gets the image inline whenever its format can say so: the gateway keeps the bytes itself. */
  private forRoute(req: ImageRequest, route: MediaRoute): ImageRequest {
    const caps = req.images.length > 0 ? route.provider.capabilities.imageEdit : route.provider.capabilities.imageGeneration;
    return caps.includes('response_format') ? { ...req, params: { ...req.params, response_format: 'b64_json' } } : req;
  }

  private async store(accountId: string, requestId: string, p: PreparedImages, img: GeneratedImage, index: number): Promise<ImageRecord | null> {
    if (img.error || !img.b64Json) return null;
    const id = newImageId();
    const bytes = Buffer.from(img.b64Json, 'base64');
    const info = await this.deps.blobs.put(imageBlobKey(id), Readable.from([bytes]));
    const record: ImageRecord = {
      _id: id, account_id: accountId, request_id: requestId, model: p.model, index, prompt: p.req.prompt,
      output_format: img.outputFormat, mime_type: imageMimeType(img.outputFormat), size: img.size ?? null, bytes: info.bytes,
      blob_key: imageBlobKey(id), metadata: p.metadata, created_at_ms: Date.now(),
    };
    await this.deps.records.insertOne(record);
    return record;
  }

  private item(img: GeneratedImage, record: ImageRecord | null, format: 'url' | 'b64_json'): ImageAnswer['data'][number] {
    const common = { output_format: img.outputFormat, ...(img.size ? { size: img.size } : {}), ...(img.revisedPrompt ? { revised_prompt: img.revisedPrompt } : {}) };
    if (img.error) return { ...common, error: img.error };
    if (!record) return { ...common, ...(img.url ? { url: img.url } : {}), error: null };
    return format === 'b64_json'
      ? { id: record._id, ...common, b64_json: img.b64Json!, error: null }
      : { id: record._id, ...common, url: this.deps.signedUrls.sign({ blobKey: record.blob_key, contentType: record.mime_type }).url, error: null };
  }
}

/**
 * An image as the archive keeps it: never its bytes nor a signed link to them (a link is a credential while it
 * lives), but what it was and the record that holds it.
 */
function archivedItem(item: ImageAnswer['data'][number], record: ImageRecord | null | undefined): Record<string, unknown> {
  const { url, b64_json: _b64, ...rest } = item;
  if (!record) return url ? { ...rest, url } : rest;
  return { ...rest, stored: { image_id: record._id, content_type: record.mime_type, bytes: record.bytes } };
}
