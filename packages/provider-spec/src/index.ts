export * from './chat-request';
export * from './chat-completion';
export * from './usage';
export * from './chat-provider';
export * from './retryable';
export * from './server-sent-events';
export * from './native-api';
export * from './chat-capabilities';
