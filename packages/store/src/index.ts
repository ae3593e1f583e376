export * from './port';
export { createStore, type StoreConfig } from './create-store';
export { createEmbeddedStore, WalCheckpointer, type CheckpointStats, type EmbeddedStoreConfig } from './embedded';
export type { MongoStoreConfig } from './mongo';
export { listPage, pageQuery, type ListPage, type PageQuery } from './list-page';
