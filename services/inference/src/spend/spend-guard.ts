import type { CatalogModel, TokenCounts } from '@gw/catalog';
import type { CallHold } from '@gw/billed-call';
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

/** A hold billing made: what it holds, and the call's worst case priced with the account's factor. */
export interface HeldAmounts {
  heldMicros: number;
  callMicros: number;
  priceFactorPpm: number;
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

  /** The call's token bounds as billing prices them. */
  tokenBounds(call: CallBounds): TokenCounts {
    const maxOutput = call.maxOutputTokens
      ?? call.model.per_request_limits.completion_tokens
      ?? call.model.context_length
      ?? this.defaultMaxOutputTokens;
    return {
      promptTokens: Math.ceil(Buffer.byteLength(JSON.stringify(call.input) ?? '') / BYTES_PER_PROMPT_TOKEN),
      completionTokens: maxOutput * Math.max(1, call.choices),
    };
  }

  /** Holds the call's worst case under `requestId` (idempotent), or throws billing's 402. */
  async reserve(id: Identity, requestId: string, call: CallBounds, traceId: string): Promise<CallHold> {
    const held = await this.hold(id, requestId, call, 0, traceId);
    return { holdId: requestId, micros: held.heldMicros, grant: false };
  }

  /** Holds a spend grant of up to `grantMicros` under `grantId` that covers this call at least, or throws billing's 402. */
  grant(id: Identity, grantId: string, call: CallBounds, grantMicros: number, traceId: string): Promise<HeldAmounts> {
    return this.hold(id, grantId, call, grantMicros, traceId);
  }

  /** Best effort: a hold not released here expires in billing. */
  release(id: Identity, requestId: string, traceId: string): void {
    void this.send({ account_id: id.accountId, request_id: requestId }, traceId);
  }

  /**
   * Gives back what no call of the grant will use; best effort (billing expires a grant not retired), so it never
   * rejects: it resolves to whether billing answered.
   */
  retireGrant(accountId: string, grantId: string, unusedMicros: number, traceId: string): Promise<boolean> {
    return this.send({ account_id: accountId, request_id: grantId, retire_grant: true, unused_micros: unusedMicros }, traceId);
  }

  private async hold(id: Identity, holdId: string, call: CallBounds, grantMicros: number, traceId: string): Promise<HeldAmounts> {
    const bounds = this.tokenBounds(call);
    const res = await callUnary<ReserveRequest, ReserveResult>(this.billing, this.billing.Reserve, {
      account_id: id.accountId,
      key_hash: id.keyHash,
      has_key_limit: id.keyLimitMicros !== null,
      key_limit_micros: id.keyLimitMicros ?? 0,
      key_limit_reset: id.keyLimitReset ?? '',
      request_id: holdId,
      deployments: call.deployments,
      prompt_tokens: bounds.promptTokens,
      max_output_tokens: bounds.completionTokens,
      grant_micros: grantMicros,
    }, { traceId });
    return { heldMicros: Number(res.held_micros), callMicros: Number(res.call_micros), priceFactorPpm: Number(res.price_factor_ppm) };
  }

  private send(req: ReleaseRequest, traceId: string): Promise<boolean> {
    return callUnary<ReleaseRequest, ReleaseResult>(this.billing, this.billing.Release, req, { traceId }).then(() => true, (err: unknown) => {
      this.logger.warn({ err, holdId: req.request_id }, 'spend hold release failed; billing expires it');
      return false;
    });
  }
}
