export { startBatchService, type BatchServiceDeps } from './app';
export { batchConfigSchema, loadBatchConfig, type BatchConfig } from './config';
