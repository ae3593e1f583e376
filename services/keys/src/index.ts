export { startKeysService, type KeysServiceOptions } from './app';
export { keysConfigSchema, loadKeysConfig, type KeysConfig, type SeedAccount } from './config';
