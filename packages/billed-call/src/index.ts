export * from './billed-call';
export * from './open-call-journal';
export * from './recovered-usage';
export * from './call-failed-event';
