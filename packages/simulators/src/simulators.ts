import type * as http from 'node:http';
import { createAnthropicHandler } from './anthropic/anthropic-simulator';
import { createGeminiHandler } from './gemini/gemini-simulator';
import { requestPath, sendJson, serve, type ListenOptions, type RunningSimulator, type SimulatorHandlerOptions } from './http-kit';
import { createOpenAIHandler } from './openai/openai-simulator';
import { createArkHandler } from './ark/ark-simulator';

/** `latencyMs` delays every response (streams: their first byte); `fixtures` are replayed in any format for `sim-fixture-<name>`. */
export interface SimulatorsOptions extends ListenOptions, SimulatorHandlerOptions {}

/**
 * Every provider format on one port, by path: `/v1/chat/completions`, `/v1/responses`, `/v1/models`, `/v1/files`
 * and `/v1/batches` (OpenAI, base URL `url/v1`), `/v1/messages` and `/v1/messages/batches` (Anthropic, base URL
 * `url/v1`), `/v1beta/...` (Gemini, base URL `url/v1beta`),
 * `/api/v3/contents/generations/tasks` and `/sim-assets/...` (Seedance video tasks, base URL `url/api/v3`).
 * Any other path answers 404.
 */
export async function startSimulators(options: SimulatorsOptions = {}): Promise<RunningSimulator> {
  const handlers = [createOpenAIHandler(options), createAnthropicHandler(options), createGeminiHandler(options), createArkHandler(options)];
  return serve((req, res) => handlers.some((handle) => handle(req, res)), notFound, options);
}

function notFound(req: http.IncomingMessage, res: http.ServerResponse): void {
  req.resume();
  sendJson(res, 404, { error: { type: 'not_found', message: `No simulated API at ${req.method} ${requestPath(req)}` } });
}
