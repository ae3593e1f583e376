export * from './schema';
export * from './load-catalog';
export * from './pricing';
export * from './batch-models';
export * from './parameter-bounds';
