import type * as http from 'node:http';
import { answerModelKnob, later, sendJson, SNAPSHOT_SUFFIX, type SimulatorFixture } from '../http-kit';
import { openAIErrorBody, simulatedErrorBody } from './openai-wire';
import { responseEvents, responseObject, type ResponseCall } from './responses-wire';
import { answer, countWords, splitWords, type SimulatedAnswer } from './simulated-chat';

/**
 * `POST /v1/responses` of the simulator. Knobs, by model: `sim-error-<status>` answers that error,
 * `sim-fixture-<name>` replays a fixture, `sim-tools` (with `tools`) calls the first function tool,
 * `sim-refusal` refuses, `sim-drop` cuts the connection (streams: after the first events); any other model
 * echoes the last user input.
 */
export interface ResponsesContext {
  latencyMs: number;
  fixtures: Record<string, SimulatorFixture>;
  /** Distinct per call; makes the ids. */
  callId: number;
}

const REFUSAL = "I'm sorry, but I can't help with that request.";
/** Events written before `sim-drop` cuts a stream: created, in_progress, the item, its first content part. */
const EVENTS_BEFORE_DROP = 4;

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

export function handleResponses(res: http.ServerResponse, raw: Buffer, ctx: ResponsesContext): void {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return sendJson(res, 400, openAIErrorBody('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
  }
  const invalid = requestProblem(body);
  if (invalid) return sendJson(res, 400, invalid);
  const req = body as Body;
  const model = req.model as string;

  // responsesErrorBody(404) is the unknown-fixture body, as for chat.
  if (answerModelKnob(res, model, ctx.latencyMs, ctx.fixtures, { errorBody: (status) => responsesErrorBody(status, model) })) return;

  const serial = ctx.callId.toString(36).padStart(10, '0');
  const toolName = model === 'sim-tools' ? firstFunctionToolName(req.tools) : undefined;
  const refusal = model === 'sim-refusal';
  const result = simulatedAnswer(req, { toolName, refusal, callId: `call_sim${serial}` });
  const call: ResponseCall = {
    id: `resp_sim${serial}`,
    createdAt: Math.floor(Date.now() / 1000),
    model: model + SNAPSHOT_SUFFIX,
    itemId: `${result.toolCall ? 'fc' : 'msg'}_sim${serial}`,
    refusal,
  };
  const requestId = `req_sim${serial}`;

  if (req.stream === true) {
    const obfuscate = (req.stream_options as Body | undefined)?.include_obfuscation !== false;
    return later(res, ctx.latencyMs, () => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
      const events = responseEvents(call, req, result, obfuscate).map(([type, data]) => `event: ${type}\ndata: ${data}\n\n`);
      if (model === 'sim-drop') return void res.write(events.slice(0, EVENTS_BEFORE_DROP).join(''), () => res.destroy());
      res.write(events[0]);
      res.end(events.slice(1).join(''));
    });
  }
  if (model === 'sim-drop') return later(res, ctx.latencyMs, () => res.destroy());
  later(res, ctx.latencyMs, () => sendJson(res, 200, responseObject(call, req, result, true), { 'x-request-id': requestId }));
}

/** The 400 body OpenAI sends for a request it cannot take, or undefined when the request is fine. */
/** The Responses API's parameters; it refuses any other ("Unknown parameter"). */
const RESPONSES_PARAMETERS = new Set([
  'background', 'context_management', 'conversation', 'include', 'input', 'instructions', 'max_output_tokens', 'max_tool_calls', 'metadata',
  'model', 'moderation', 'parallel_tool_calls', 'previous_response_id', 'prompt', 'prompt_cache_key', 'prompt_cache_retention', 'reasoning',
  'safety_identifier', 'service_tier', 'store', 'stream', 'stream_options', 'temperature', 'text', 'tool_choice', 'tools', 'top_logprobs',
  'top_p', 'truncation', 'user',
]);

function requestProblem(body: unknown) {
  if (!isObject(body)) return openAIErrorBody('The body must be a JSON object.', 'invalid_request_error', null, null);
  const unknown = Object.keys(body).find((field) => !RESPONSES_PARAMETERS.has(field));
  if (unknown !== undefined) return openAIErrorBody(`Unknown parameter: '${unknown}'.`, 'invalid_request_error', unknown, 'unknown_parameter');
  if (typeof body.model !== 'string' || body.model === '') {
    return openAIErrorBody("Missing required parameter: 'model'.", 'invalid_request_error', 'model', 'missing_required_parameter');
  }
  if (typeof body.input !== 'string' && !Array.isArray(body.input)) {
    return openAIErrorBody("Invalid type for 'input': expected a string or an array of input items.", 'invalid_request_error', 'input', 'invalid_type');
  }
  const max = body.max_output_tokens;
  if (max !== undefined && max !== null && !(Number.isInteger(max) && (max as number) >= 1)) {
    return openAIErrorBody("Invalid 'max_output_tokens': expected an integer of at least 1.", 'invalid_request_error', 'max_output_tokens', 'invalid_value');
  }
  return undefined;
}

function responsesErrorBody(status: number, model: string) {
  return status === 400
    ? openAIErrorBody("Invalid value for 'input': simulated invalid request.", 'invalid_request_error', 'input', 'invalid_value')
    : simulatedErrorBody(status, model);
}

/** The Responses input as chat messages, so the chat "model" answers it: instructions first, then the items. */
function inputAsMessages(req: Body): Array<{ role: string; content: unknown }> {
  const messages: Array<{ role: string; content: unknown }> = [];
  if (typeof req.instructions === 'string') messages.push({ role: 'system', content: req.instructions });
  if (typeof req.input === 'string') return [...messages, { role: 'user', content: req.input }];
  for (const item of req.input as unknown[]) {
    if (!isObject(item)) continue;
    if (typeof item.role === 'string') messages.push({ role: item.role, content: item.content });
    else if (item.type === 'function_call_output') messages.push({ role: 'tool', content: typeof item.output === 'string' ? item.output : '' });
  }
  return messages;
}

function simulatedAnswer(req: Body, opts: { toolName?: string; refusal: boolean; callId: string }): SimulatedAnswer {
  const maxTokens = typeof req.max_output_tokens === 'number' ? req.max_output_tokens : undefined;
  const echoed = answer(inputAsMessages(req), { maxTokens, toolName: opts.toolName, callId: opts.callId });
  if (!opts.refusal) return echoed;
  return { words: splitWords(REFUSAL), finishReason: 'stop', promptTokens: echoed.promptTokens, completionTokens: countWords(REFUSAL) };
}

/** Responses tools are flat: `{type: 'function', name, parameters}`. */
function firstFunctionToolName(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return undefined;
  const tool = tools.find((t) => isObject(t) && t.type === 'function' && typeof t.name === 'string') as Body | undefined;
  return tool?.name as string | undefined;
}
