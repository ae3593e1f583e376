import type { CatalogModel } from '@gw/catalog';
import type { NativeApi } from '@gw/provider-spec';
import type { Body } from './body-checks';
import { checkMessagesForModel, checkResponsesForModel } from './native-model-checks';
import { validateMessagesRequest } from './messages-rules';
import { validateResponsesRequest } from './responses-rules';

/** What differs between the native APIs on the gateway's side; the wire formats are the translators' business. */
export interface NativeApiRules {
  validate(body: unknown): Body;
  /** Input the model must be able to take, and its prompt limits. */
  checkForModel(body: Body, model: CatalogModel): void;
  /** The body field capping output tokens, held to the model's `per_request_limits.completion_tokens`. */
  outputTokensParam: string;
  /** Client headers the API defines, passed on to the provider. */
  forwardedHeaders: readonly string[];
  /** Fields set upstream when the caller left them out (or sent null). */
  upstreamDefaults: Body;
}

export const NATIVE_API_RULES: Record<NativeApi, NativeApiRules> = {
  responses: {
    validate: validateResponsesRequest,
    checkForModel: checkResponsesForModel,
    outputTokensParam: 'max_output_tokens',
    forwardedHeaders: [],
    // Stateless: an omitted `store` would default to true upstream and keep the caller's data there.
    upstreamDefaults: { store: false },
  },
  messages: {
    validate: validateMessagesRequest,
    checkForModel: checkMessagesForModel,
    outputTokensParam: 'max_tokens',
    forwardedHeaders: ['anthropic-version', 'anthropic-beta'],
    upstreamDefaults: {},
  },
};
