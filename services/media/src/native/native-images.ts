import type { CallArchiver } from '@gw/call-archive';
import { InputError, type Identity } from '@gw/platform';
import type { MediaBilledCalls } from '../calls/media-billed-calls';
import type { MediaRouter } from '../calls/media-routes';
import type { ImageInputs } from '../images/image-inputs';
import { forRoute, nativeRoutes, resolveAssets } from './native-params';

/** The most images a native body is assumed to ask for when it does not say (its hold covers that many). */
const DEFAULT_NATIVE_IMAGES = 1;

/**
 * `POST /v1/images/generations` with a supplier-native body: asset references resolved to signed URLs, the
 * model rewritten per route, the provider's JSON answered as it came. Billed per image the answer holds and
 * the tokens it reports; the native answer is the provider's own, so its images are not stored as records.
 */
export async function nativeImages(deps: { router: MediaRouter; calls: MediaBilledCalls; inputs: ImageInputs; archive: CallArchiver }, identity: Identity, traceId: string, raw: unknown) {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InputError('The native body must be a JSON object', null, 'invalid_request');
  const { model, routes } = deps.router.model((raw as Record<string, unknown>).model, 'image');
  const serving = nativeRoutes(routes, 'image');
  const body = await resolveAssets(raw as Record<string, unknown>, (ref, param) => deps.inputs.assetUrl(identity.accountId, ref, param));
  const n = typeof body.n === 'number' && Number.isSafeInteger(body.n) && body.n > 0 ? body.n : DEFAULT_NATIVE_IMAGES;
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  const startedAtMs = Date.now();
  const { requestId, result } = await deps.calls.call({
    apiType: 'image', identity, traceId, model: model.id,
    plan: { routes: serving, bounds: { promptTokens: Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 3), outputTokens: (model.per_request_limits.completion_tokens ?? 0) * n, images: n, audioSeconds: 0, videoSeconds: 0 } },
    send: (route) => route.provider.native!({ kind: 'image', body: forRoute(body, route) }, route.target),
    usageOf: (answer, route) => {
      const json = (answer.type === 'json' ? answer.body : null) as { data?: unknown; usage?: Record<string, unknown> } | null;
      const tokens = Object.fromEntries(['input_tokens', 'output_tokens', 'total_tokens'].map((k) => [k, json?.usage?.[k]]).filter(([, v]) => typeof v === 'number'));
      return {
        usage: { generated_images: Array.isArray(json?.data) ? json.data.length : 0, ...tokens },
        providerResponseId: answer.type === 'json' ? answer.providerResponseId : '', servedModel: route.target.providerModel, finishReason: 'stop',
      };
    },
  });
  const answer = result.type === 'json' ? result.body : null;
  // The caller's body (its asset references, not the signed links they were resolved to) and the provider's answer.
  deps.archive.record({
    requestId, identity, apiType: 'image', model: model.id, providerResponseId: result.type === 'json' ? result.providerResponseId : '', streamed: false,
    request: raw, response: answer, startedAtMs, traceId,
  });
  return { requestId, body: answer };
}
