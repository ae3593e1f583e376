export { createEmbeddedStore, type EmbeddedStoreConfig } from './embedded-store';
