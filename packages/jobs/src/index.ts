export * from './job';
export { JobStore, JOBS_COLLECTION, type EnqueueRequest, type JobStoreOptions, type LeaseCheck } from './job-store';
export { JobWorkerPool, type JobHandler, type JobRun, type JobWorkerPoolOptions } from './worker-pool';
export { JobExpirySweeper } from './expiry-sweeper';
