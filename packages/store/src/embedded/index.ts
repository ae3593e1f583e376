export { createEmbeddedStore, type EmbeddedStoreConfig } from './embedded-store';
export { WalCheckpointer, type CheckpointStats, type WalCheckpointerOptions } from './wal-checkpointer';
