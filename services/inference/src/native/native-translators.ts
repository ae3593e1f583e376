import type { NativeApi, NativeApiTranslator } from '@gw/provider-spec';
import { createNativeTranslator } from '@gw/providers';

/** One translator per (native API, provider kind), created on first use; they own connection pools. */
export class NativeTranslators {
  private readonly translators = new Map<string, NativeApiTranslator | null>();

  constructor(private readonly create: typeof createNativeTranslator = createNativeTranslator) {}

  /** The translator serving `api` over `kind`, or null when that pair is not served. */
  for(api: NativeApi, kind: string): NativeApiTranslator | null {
    const key = `${api}:${kind}`;
    if (!this.translators.has(key)) this.translators.set(key, this.create(api, kind));
    return this.translators.get(key)!;
  }

  async close(): Promise<void> {
    await Promise.all([...this.translators.values()].map((t) => t?.close?.()));
  }
}
