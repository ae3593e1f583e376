export { startOpenAISimulator, SNAPSHOT_SUFFIX } from './openai/openai-simulator';
export type { OpenAISimulator, OpenAISimulatorOptions, SimulatorFixture } from './openai/openai-simulator';
export { startAnthropicSimulator, type AnthropicSimulator, type AnthropicSimulatorOptions, type ReceivedRequest } from './anthropic/anthropic-simulator';
export { startGeminiSimulator, GEMINI_SIM_INVALID_KEY, type GeminiSimulator, type GeminiSimulatorOptions } from './gemini/gemini-simulator';
