export { createMongoStore, type MongoStoreConfig } from './mongo-store';
