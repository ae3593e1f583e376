export { startOpenAISimulator, createOpenAIHandler, SNAPSHOT_SUFFIX } from './openai/openai-simulator';
export type { OpenAISimulator, OpenAISimulatorOptions, SimulatorFixture } from './openai/openai-simulator';
export {
  startAnthropicSimulator, createAnthropicHandler, type AnthropicSimulator, type AnthropicSimulatorOptions, type AnthropicHandlerOptions, type ReceivedRequest,
} from './anthropic/anthropic-simulator';
export { startGeminiSimulator, createGeminiHandler, GEMINI_SIM_INVALID_KEY, type GeminiSimulator, type GeminiSimulatorOptions } from './gemini/gemini-simulator';
export { startSimulators, type SimulatorsOptions } from './simulators';
export type { RunningSimulator, SimulatorHandler, SimulatorHandlerOptions } from './http-kit';
export { REQUEST_COUNT_PATH } from './http-kit';
export { startArkSimulator, createArkHandler, type ArkSimulator } from './ark/ark-simulator';
export { simulatedMp4 } from './video/video-tasks';
