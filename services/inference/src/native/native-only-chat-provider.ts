import { InputError } from '@gw/platform';
import { markRetryable, type ChatProvider } from '@gw/provider-spec';
import type { NativeTranslators } from './native-translators';

/**
 * The chat provider for a kind, or, for a kind served only through native APIs (a messages-only upstream),
 * a stand-in that refuses chat per call, so such a catalogue entry does not stop the service from starting.
 * A kind nothing serves still fails at startup, as a typo in the catalogue should.
 */
export function chatProviderOrNativeOnly(kind: string, create: (kind: string) => ChatProvider, translators: NativeTranslators): ChatProvider {
  try {
    return create(kind);
  } catch (err) {
    if (!translators.servesAny(kind)) throw err;
    return new NativeOnlyChatProvider(kind);
  }
}

class NativeOnlyChatProvider implements ChatProvider {
  constructor(readonly kind: string) {}

  async chat(): Promise<never> {
    throw refusal();
  }

  async chatStream(): Promise<never> {
    throw refusal();
  }
}

function refusal() {
  // Not retryable: another try of this deployment cannot help, and it must not count towards a cooldown.
  return markRetryable(new InputError('This model is not served through chat completions; use its native API', 'model', 'unsupported_api'), false);
}
