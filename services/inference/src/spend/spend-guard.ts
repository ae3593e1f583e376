import type { CatalogModel } from '@gw/catalog';
import { callUnary, type Identity, type Logger } from '@gw/platform';
import type { BillingServiceClient, ReleaseRequest, ReleaseResult, ReserveRequest, ReserveResult } from '@gw/proto';

/** What a call may cost at most, in the terms billing prices: deployments and token bounds. */
export interface CallBounds {
  model: CatalogModel;
  /** Every deployment the call may be served by, fallbacks included. */
  deployments: string[];
  /** The request as sent (its size bounds the prompt). */
  input: unknown;
  /** The client's output cap (`max_tokens`, `max_completion_tokens`, `max_output_tokens`), when it set one. */
  maxOutputTokens: number | null;
  /** Choices generated per call (`n`). */
  choices: number;
}

/** The prompt's upper estimate: tokenizers average about four bytes of text per token, and the JSON around the text adds more. */
const BYTES_PER_PROMPT_TOKEN = 3;

/**
 * Spend limits on the hot path: before a provider is called, billing holds the call's worst-case cost against
 * the account's balance and the key's limit (gRPC `Reserve`, one atomic step in billing, so a limit holds
 * across any number of inference instances). The call's usage event settles the hold in billing; a call that
 * ends with no usage releases it here, best effort (billing expires forgotten holds).
 */
export class SpendGuard {
  constructor(
    private readonly billing: BillingServiceClient,
    private readonly logger: Logger,
    /** Output bound for a model that declares none and a call that sets none. */
    private readonly defaultMaxOutputTokens: number,
  ) {}

  /** Holds the call's worst case under `requestId` (idempotent), or throws billing's 402. */
  async reserve(id: Identity, requestId: string, call: CallBounds, traceId: string): Promise<void> {
    const maxOutput = call.maxOutputTokens
      ?? call.model.per_request_limits.completion_tokens
      ?? call.model.context_length
      ?? this.defaultMaxOutputTokens;
    await callUnary<ReserveRequest, ReserveResult>(this.billing, this.billing.Reserve, {
      account_id: id.accountId,
      key_hash: id.keyHash,
      has_key_limit: id.keyLimitMicros !== null,
      key_limit_micros: id.keyLimitMicros ?? 0,
      key_limit_reset: id.keyLimitReset ?? '',
      request_id: requestId,
      deployments: call.deployments,
      prompt_tokens: Math.ceil(Buffer.byteLength(JSON.stringify(call.input) ?? '') / BYTES_PER_PROMPT_TOKEN),
      max_output_tokens: maxOutput * Math.max(1, call.choices),
    }, { traceId });
  }

  /** Best effort: a hold not released here expires in billing. */
  release(id: Identity, requestId: string, traceId: string): void {
    callUnary<ReleaseRequest, ReleaseResult>(this.billing, this.billing.Release, { account_id: id.accountId, request_id: requestId }, { traceId })
      .catch((err: unknown) => this.logger.warn({ err, requestId }, 'spend hold release failed; billing expires it'));
  }
}
