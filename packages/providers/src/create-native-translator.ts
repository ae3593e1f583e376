import type { NativeApi, NativeApiTranslator } from '@gw/provider-spec';

/**
 * One translator per (native API, upstream wire format) pair. A pair not listed here is not served: the
 * caller gets a clear error instead of a half-translated request.
 */
export function createNativeTranslator(api: NativeApi, kind: string): NativeApiTranslator | null {
  switch (`${api}:${kind}`) {
    default:
      return null;
  }
}
