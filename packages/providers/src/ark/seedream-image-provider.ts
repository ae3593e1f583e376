import { z } from 'zod';
import type { ImageRequest, ImageResult, MediaCapabilities, MediaProvider, MediaTarget, NativeMediaAnswer, NativeMediaCall } from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { headerValue, jsonRequestHeaders, requestUpstream } from '../http/post-upstream';
import { callUpstream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { mapArkHttpError } from './ark-error';
import { fromSeedreamImages, SEEDREAM_IMAGE_FIELDS, toSeedreamBody } from './convert-seedream-images';
import { seedreamImagesSchema } from './seedream-api';

export const ARK_MEDIA_CAPABILITIES: MediaCapabilities = {
  imageGeneration: SEEDREAM_IMAGE_FIELDS,
  imageEdit: SEEDREAM_IMAGE_FIELDS,
  imageStream: false,
  transcription: [],
  transcriptionFormats: [],
  speech: [],
  speechFormats: [],
  native: ['image'],
};

const IMAGES = '/images/generations';

/** Seedream images on the Ark API: `POST {base}/images/generations`, answered in the same request. */
export class SeedreamImageProvider implements MediaProvider {
  readonly kind = 'ark';
  readonly capabilities = ARK_MEDIA_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  images(req: ImageRequest, target: MediaTarget, signal?: AbortSignal): Promise<ImageResult> {
    const body = toSeedreamBody(req, target.providerModel);
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.post(target, deadline, body);
      const { data } = await readJsonAnswer(res, seedreamImagesSchema);
      return fromSeedreamImages(data, headerValue(res.headers, 'x-request-id') ?? `ark-img-${data.created}`, target.providerModel);
    });
  }

  native(call: NativeMediaCall, target: MediaTarget, signal?: AbortSignal): Promise<NativeMediaAnswer> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.post(target, deadline, { ...call.body, model: target.providerModel });
      const { json, data } = await readJsonAnswer(res, z.looseObject({ created: z.number().nullish() }));
      return { type: 'json' as const, body: json, providerResponseId: headerValue(res.headers, 'x-request-id') ?? `ark-img-${data.created ?? Date.now()}` };
    });
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private post(target: MediaTarget, deadline: Deadline, body: Record<string, unknown>): Promise<UpstreamAnswer> {
    const headers = jsonRequestHeaders(target, false);
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    return requestUpstream(this.pools, target, {
      method: 'POST', endpoint: IMAGES, headers, body: JSON.stringify(body), deadline, mapError: mapArkHttpError,
    });
  }
}
