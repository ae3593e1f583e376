export { startInferenceService, type InferenceDeps } from './app';
export { inferenceConfigSchema, loadInferenceConfig, type InferenceConfig } from './config';
