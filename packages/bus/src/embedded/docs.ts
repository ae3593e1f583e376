import type { Doc } from '@gw/store';

/** One published message. */
export interface LogEntryDoc extends Doc {
  seq: number;
  key: string;
  /** JSON text, as on Kafka: values round-trip identically on both engines and need no field-name rules. */
  value: string;
  publishedAt: number;
}

/** `_id` is the topic. */
export interface TopicDoc extends Doc {
  /** Last sequence handed out; entries are numbered from 1. */
  seq: number;
  /** Entries up to here were deleted on purpose: a consumer below it is not looking at a gap. */
  trimmedThrough: number;
}

export interface GroupDoc extends Doc {
  group: string;
  topic: string;
  /** Last committed sequence. */
  offset: number;
  /** Member that may consume, while `leaseUntil` (epoch ms) is in the future. */
  owner: string | null;
  leaseUntil: number;
}

export function groupDocId(group: string, topic: string): string {
  return JSON.stringify([group, topic]);
}

/** Zero-padded so `_id` order is sequence order too. */
export function entryId(seq: number): string {
  return String(seq).padStart(16, '0');
}
