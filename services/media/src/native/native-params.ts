import { checkBodyDepth, InputError, setOwnEntry } from '@gw/platform';
import { ASSET_SCHEME } from '../images/image-records';
import type { MediaRoute } from '../calls/media-routes';

/** `Svc-Native-Params: true`: the body is the supplier's own JSON, not the normalized one. */
export const NATIVE_PARAMS_HEADER = 'svc-native-params';

export function wantsNativeParams(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return false;
  if (value.toLowerCase() === 'true') return true;
  if (value.toLowerCase() === 'false') return false;
  throw new InputError('Svc-Native-Params must be true or false', 'Svc-Native-Params', 'invalid_value');
}

/** A whole string naming one stored asset; text that merely starts with the scheme is left alone. */
const ASSET_REFERENCE = new RegExp(`^${ASSET_SCHEME}[A-Za-z0-9_-]{1,128}$`);

/** The most `asset://` references one native body may carry. */
const MAX_ASSET_REFERENCES = 32;

/**
 * A supplier-native body made ready for one route: every string that is exactly `asset://<id>` (at any
 * depth) replaced by a short-lived signed URL of that stored image, once `resolve` has checked it is the
 * caller's own (`forRoute` then puts the route's provider model id in place of the public model name).
 * Failures name the JSON path of the reference.
 */
export async function resolveAssets(body: Record<string, unknown>, resolve: (ref: string, param: string) => Promise<string>): Promise<Record<string, unknown>> {
  // Within the JSON bounds first: the walk below recurses, and the body is serialized for the supplier after it.
  checkBodyDepth(body);
  let count = 0;
  const walk = async (value: unknown, path: string): Promise<unknown> => {
    if (typeof value === 'string' && ASSET_REFERENCE.test(value)) {
      if (++count > MAX_ASSET_REFERENCES) throw new InputError(`At most ${MAX_ASSET_REFERENCES} asset references per request`, path, 'too_many_assets');
      return resolve(value, path);
    }
    if (Array.isArray(value)) return Promise.all(value.map((v, i) => walk(v, `${path}[${i}]`)));
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) setOwnEntry(out, k, await walk(v, path ? `${path}.${k}` : k));
      return out;
    }
    return value;
  };
  return (await walk(body, '')) as Record<string, unknown>;
}

export function forRoute(body: Record<string, unknown>, route: MediaRoute): Record<string, unknown> {
  return { ...body, model: route.target.providerModel };
}

/** The routes of a model that take native bodies of `kind`; none is a 400 naming the header. */
export function nativeRoutes(routes: MediaRoute[], kind: 'image' | 'speech'): MediaRoute[] {
  const serving = routes.filter((r) => r.provider.native && r.provider.capabilities.native.includes(kind));
  if (serving.length === 0) throw new InputError('This model takes no supplier-native body: send the normalized one', 'Svc-Native-Params', 'unsupported_parameter');
  return serving;
}
