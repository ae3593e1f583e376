export { startMediaService, type MediaServiceDeps } from './app';
export { loadMediaConfig, mediaConfigSchema, type MediaConfig } from './config';
