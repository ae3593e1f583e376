export * from './schema';
export * from './load-catalog';
