export * from './port';
export { createStore, type StoreConfig } from './create-store';
export { createEmbeddedStore, type EmbeddedStoreConfig } from './embedded';
export { createMongoStore, type MongoStoreConfig } from './mongo';
