import type { Doc } from '@gw/store';

export interface GroupDoc extends Doc {
  group: string;
  topic: string;
  /** Last committed sequence. */
  offset: number;
  /** Member that may consume, while `leaseUntil` (epoch ms) is in the future. */
  owner: string | null;
  leaseUntil: number;
  /** A group of one subscription only (`SubscribeOptions.ephemeral`): deleted when its member is gone. */
  ephemeral?: boolean;
  /** Epoch ms; set on ephemeral groups, whose age the trim needs before any lease was taken. */
  createdAt?: number;
}

export function groupDocId(group: string, topic: string): string {
  return JSON.stringify([group, topic]);
}
