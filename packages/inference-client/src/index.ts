export * from './inference-client';
