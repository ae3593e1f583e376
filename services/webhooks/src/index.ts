export { startWebhooksService, type WebhooksServiceOptions } from './app';
export { loadWebhooksConfig, webhooksConfigSchema, type WebhooksConfig } from './config';
export { readOrCreateSecretsKey } from './secrets-key-file';
