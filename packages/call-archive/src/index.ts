export * from './call-archiver';
export * from './redact';
export * from './inline-media';
export * from './archivable';
export * from './archive-config';
