export * from './billed-call';
export * from './call-failed-event';
