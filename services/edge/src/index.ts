export { startEdge, type RunningEdge, type EdgeDeps } from './app';
export { edgeConfigSchema, loadEdgeConfig, type EdgeConfig } from './config';
