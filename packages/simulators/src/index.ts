export { startOpenAISimulator, SNAPSHOT_SUFFIX } from './openai/openai-simulator';
export type { OpenAISimulator, OpenAISimulatorOptions, SimulatorFixture } from './openai/openai-simulator';
