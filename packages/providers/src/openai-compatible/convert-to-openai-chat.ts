import type { ChatCompletionRequest, ChatMessage } from '@gw/provider-spec';
import { GATEWAY_FIELD_POLICY, type RequestFieldPolicy } from '../convert/request-field-policy';

/**
 * What happens to each request field on the way to an OpenAI-style upstream (see RequestFieldPolicy):
 *  - forward: same name and meaning upstream
 *  - convert: rewritten below
 *  - drop:    gateway-only, or not part of OpenAI's chat API (OpenAI rejects unknown arguments)
 */
export const OPENAI_FIELD_POLICY: RequestFieldPolicy<'forward' | 'convert' | 'drop'> = {
  ...GATEWAY_FIELD_POLICY,
  model: 'convert', // replaced by the target's provider model id
  messages: 'convert', // rebuilt from known message fields
  temperature: 'forward',
  top_p: 'forward',
  frequency_penalty: 'forward',
  presence_penalty: 'forward',
  max_completion_tokens: 'forward',
  max_tokens: 'forward',
  top_k: 'drop', // not an OpenAI parameter; servers that take it can get it through extra_body
  stream: 'convert', // set by the call kind, not by the body
  stream_options: 'convert', // streams always ask for usage, it is what we bill
  tools: 'forward',
  tool_choice: 'forward',
  parallel_tool_calls: 'forward',
  prompt_cache_key: 'forward',
  reasoning: 'convert', // effort -> reasoning_effort
  response_format: 'forward',
  logprobs: 'forward',
  top_logprobs: 'forward',
  stop: 'forward',
  verbosity: 'forward',
  seed: 'forward',
  n: 'forward',
  logit_bias: 'forward',
};

const FORWARDED_FIELDS = (Object.keys(OPENAI_FIELD_POLICY) as Array<keyof ChatCompletionRequest>).filter(
  (key) => OPENAI_FIELD_POLICY[key] === 'forward',
);

/** Body fields extra_body may not override: they decide what the response looks like to our parser. */
const TRANSPORT_FIELDS = new Set(['model', 'stream', 'stream_options']);

export function convertToOpenAIChat(req: ChatCompletionRequest, providerModel: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model: providerModel, messages: req.messages.map(convertMessage) };
  for (const key of FORWARDED_FIELDS) {
    if (req[key] !== undefined) body[key] = req[key];
  }
  if (req.reasoning?.effort !== undefined) body.reasoning_effort = req.reasoning.effort;
  if (req.extra_body) {
    for (const [key, value] of Object.entries(req.extra_body)) {
      if (!TRANSPORT_FIELDS.has(key)) body[key] = value;
    }
  }
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function convertMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.name !== undefined) out.name = m.name;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
  return out;
}
