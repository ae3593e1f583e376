export * from './schema';
export * from './load-catalog';
export * from './pricing';
