/** How one kind of callback is delivered (the spec's Limits table). */
export interface DeliveryPolicy {
  timeoutMs: number;
  attempts: number;
  /** Wait before attempt n+2 after attempt n+1 ended: 1 s before the 2nd, 3 s before the 3rd. */
  backoffMs: number[];
}

export type CallbackKind = 'batch' | 'video';

export const DELIVERY_POLICIES: Record<CallbackKind, DeliveryPolicy> = {
  batch: { timeoutMs: 10_000, attempts: 3, backoffMs: [1_000, 3_000] },
  video: { timeoutMs: 30_000, attempts: 3, backoffMs: [1_000, 3_000] },
};

export const isCallbackKind = (kind: string): kind is CallbackKind => Object.hasOwn(DELIVERY_POLICIES, kind);
