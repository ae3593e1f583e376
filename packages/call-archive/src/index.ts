export * from './call-archiver';
export * from './redact';
export * from './inline-media';
export * from './archive-config';
