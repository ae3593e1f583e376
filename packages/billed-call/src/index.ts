export * from './billed-call';
