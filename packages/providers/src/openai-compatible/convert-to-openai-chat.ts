import type { ChatCapabilities, ChatCompletionRequest, ChatMessage } from '@gw/provider-spec';
import { GATEWAY_PARAMETERS, rejectUnsupported, reservedBodyFields } from '../convert/request-field-policy';

/**
 * What an OpenAI-style upstream honours (see ChatCapabilities). Supported fields go upstream under the same
 * name, except `reasoning` (effort -> reasoning_effort) and the gateway's own fields.
 */
export const OPENAI_CAPABILITIES: ChatCapabilities = {
  parameters: {
    ...GATEWAY_PARAMETERS,
    temperature: 'supported',
    top_p: 'supported',
    frequency_penalty: 'supported',
    presence_penalty: 'supported',
    max_completion_tokens: 'supported',
    max_tokens: 'supported',
    top_k: 'unsupported', // not an OpenAI chat parameter (OpenAI refuses unknown arguments)
    tools: 'supported',
    tool_choice: 'supported',
    parallel_tool_calls: 'supported',
    prompt_cache_key: 'supported',
    user: 'supported',
    safety_identifier: 'supported',
    reasoning: 'supported',
    response_format: 'supported',
    logprobs: 'supported',
    top_logprobs: 'supported',
    stop: 'supported',
    verbosity: 'supported',
    seed: 'supported',
    n: 'supported',
    logit_bias: 'supported',
  },
  reservedBodyFields: reservedBodyFields(['reasoning_effort']),
};

/** Request fields that are not the gateway's own and go upstream under their own name. */
const FORWARDED_FIELDS = (Object.keys(OPENAI_CAPABILITIES.parameters) as Array<keyof ChatCompletionRequest>).filter(
  (key) => OPENAI_CAPABILITIES.parameters[key] === 'supported' && !(key in GATEWAY_PARAMETERS) && key !== 'reasoning',
);

export function convertToOpenAIChat(req: ChatCompletionRequest, providerModel: string, stream: boolean): Record<string, unknown> {
  rejectUnsupported(OPENAI_CAPABILITIES, req);
  let body: Record<string, unknown> = { model: providerModel, messages: req.messages.map(convertMessage) };
  for (const key of FORWARDED_FIELDS) {
    if (req[key] !== undefined) body[key] = req[key];
  }
  if (req.reasoning?.effort !== undefined) body.reasoning_effort = req.reasoning.effort;
  // Reserved fields were refused above, so extra_body only adds fields. Spread, not assignment: a key
  // "__proto__" stays a field instead of becoming the body's prototype (and vanishing from its JSON).
  if (req.extra_body) body = { ...body, ...req.extra_body };
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
