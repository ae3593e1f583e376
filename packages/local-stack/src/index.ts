export * from './local-stack';
