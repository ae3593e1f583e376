export { startBillingService, type BillingServiceDeps } from './app';
export { billingConfigSchema, loadBillingConfig, type BillingConfig, type SeedAccount } from './config';
export { USAGE_CONSUMER_GROUP } from './usage-consumer';
