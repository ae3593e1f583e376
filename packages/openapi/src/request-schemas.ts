import { anyObject, arr, bool, int, keyValueMetadata, num, obj, oneOf, ref, str, type Schema } from './schema-helpers';

/** Request bodies, with the field names of the spec's endpoint tables (gateway-api.md, "Endpoints"). */
const stringOrArray = { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] };
const effort = oneOf(['xhigh', 'high', 'medium', 'low', 'minimal', 'none']);

const closed = { additionalProperties: false };
const functionName = str('1 to 64 letters, digits, underscores or dashes', { pattern: '^[A-Za-z0-9_-]{1,64}$' });

const chatFields: Record<string, Schema> = {
  model: str('model id'), messages: arr(ref('ChatMessage')),
  temperature: num(undefined, { minimum: 0, maximum: 2 }), top_p: num(undefined, { minimum: 0, maximum: 1 }),
  frequency_penalty: num(undefined, { minimum: -2, maximum: 2 }), presence_penalty: num(undefined, { minimum: -2, maximum: 2 }),
  max_completion_tokens: int('generation cap'), max_tokens: int('generation cap (older name)'), top_k: int(), context_length: int('context window length'),
  stream: bool(), stream_options: obj({ include_usage: bool() }, [], 'streamed requests only (a 400 without stream: true)', closed),
  tools: {
    ...arr(obj({
      type: str('usually function'),
      function: obj({ name: functionName, description: str(), parameters: anyObject('JSON schema'), strict: bool() }, ['name'], undefined, closed),
    }, ['type'], undefined, closed)),
    maxItems: 128,
  },
  tool_choice: { oneOf: [{ type: 'string' }, obj({ type: str(), function: obj({ name: str() }, ['name'], undefined, closed) }, [], undefined, closed)] },
  parallel_tool_calls: bool(), previous_response_id: str(), conversation: anyObject(), prompt_cache_key: str(undefined, { maxLength: 64 }), store: bool(),
  safety_identifier: str(undefined, { maxLength: 64 }), user: str('deprecated', { maxLength: 256 }),
  truncation: str(), include: arr(str()), metadata: anyObject(), extra_body: anyObject(), provider_options: anyObject(), schema_params: anyObject(),
  network_search: bool(),
  reasoning: obj({ enabled: bool(), effort, max_tokens: int(), exclude: bool() }, [], undefined, closed),
  response_format: obj({
    type: oneOf(['text', 'json_object', 'json_schema']),
    json_schema: obj({ name: functionName, description: str(), strict: bool(), schema: anyObject() }, ['name'], undefined, closed),
  }, ['type'], undefined, closed),
  logprobs: bool(), top_logprobs: int('requires logprobs=true', { minimum: 0, maximum: 20 }), stop: stringOrArray, verbosity: oneOf(['low', 'medium', 'high']), seed: int(),
  n: int('number of choices', { minimum: 1, maximum: 128 }),
  logit_bias: { type: 'object', description: 'token id bias: token ids (decimal strings) to biases from -100 to 100', additionalProperties: { type: 'number', minimum: -100, maximum: 100 } },
};

export const requestSchemas: Record<string, Schema> = {
  ChatCompletionRequest: obj(chatFields, ['model', 'messages'],
    'Any other field is a 400 `unknown_parameter`; fields of one provider go in `extra_body`.', { additionalProperties: false }),
  AsyncChatCompletionRequest: obj({ ...chatFields, stream: { type: 'boolean', enum: [false], description: 'must be false or omitted' } }, ['model', 'messages'],
    'The chat completion fields; `stream: true` is a 400 `invalid_request`; `callback_url` is not accepted; any other field is a 400 `unknown_parameter`.',
    { additionalProperties: false }),

  ResponseRequest: obj({
    background: bool('explicit true unsupported (501)'), context_management: arr(obj({ type: oneOf(['compaction']), compact_threshold: num() })),
    conversation: { oneOf: [{ type: 'string' }, obj({ id: str() })], description: 'unsupported (501)' },
    include: arr(str()), input: { oneOf: [{ type: 'string' }, arr(obj({
      type: str(), role: oneOf(['user', 'assistant', 'system', 'developer']), content: { oneOf: [{ type: 'string' }, arr(anyObject())] }, id: str(), call_id: str(),
      output: { oneOf: [{ type: 'string' }, arr(anyObject())] }, status: oneOf(['in_progress', 'completed', 'incomplete']),
    }))] },
    instructions: str(), max_output_tokens: num(), max_tool_calls: num(), metadata: keyValueMetadata(),
    model: str(), moderation: obj({ model: str() }), parallel_tool_calls: bool(), previous_response_id: str('unsupported (501)'),
    prompt: obj({ id: str(), variables: anyObject(), version: str() }), prompt_cache_key: str(undefined, { maxLength: 64 }), prompt_cache_retention: oneOf(['in_memory', '24h']),
    reasoning: obj({
      context: oneOf(['auto', 'current_turn', 'all_turns']), effort, summary: oneOf(['auto', 'concise', 'detailed']),
      generate_summary: oneOf(['auto', 'concise', 'detailed']),
    }),
    safety_identifier: str(undefined, { maxLength: 64 }), service_tier: oneOf(['auto', 'default', 'flex', 'scale', 'priority']),
    store: { type: 'boolean', enum: [false], description: 'must be false or omitted' }, stream: bool(), stream_options: obj({ include_obfuscation: bool() }),
    temperature: num(undefined, { minimum: 0, maximum: 2 }), text: obj({ format: anyObject(), verbosity: oneOf(['low', 'medium', 'high']) }),
    tool_choice: { oneOf: [oneOf(['none', 'auto', 'required']), anyObject()] }, tools: arr(anyObject()),
    top_logprobs: num(undefined, { minimum: 0, maximum: 20 }), top_p: num(), truncation: oneOf(['auto', 'disabled']), user: str('deprecated', { maxLength: 256 }),
  }, ['model']),

  MessagesRequest: obj({ model: str(), messages: arr(anyObject()), max_tokens: int(), stream: bool(), system: {} }, ['model', 'messages', 'max_tokens'],
    'Provider-native (Anthropic Messages) body; other fields pass through.', { additionalProperties: true }),
  CountTokensRequest: obj({ model: str(), messages: arr(anyObject()), system: {}, tools: arr(anyObject()) }, ['model', 'messages'],
    'A messages body without max_tokens.', { additionalProperties: true }),

  ImageGenerationRequest: obj({
    model: str(), prompt: str(), n: int(), size: str('<width>x<height>'), aspect_ratio: str(), resolution: str(), quality: str(), seed: int(),
    prompt_extend: bool(), negative_prompt: str(), watermark: bool(), response_format: str(), images: arr({}, 'reference images'),
    sequential_image_generation: str(), sequential_image_generation_options: obj({ max_images: int() }),
    optimize_prompt_options: obj({ mode: str('standard or fast') }), strength: num(),
    enable_interleave: bool(), enable_web_search: bool(), enable_sequential: bool(), thinking_mode: bool(), layer_decomposition: bool(),
    include_thoughts: bool(), enable_image_search: bool(), output_format: str(), stream: bool(), partial_images: int(),
    metadata: keyValueMetadata(), extra_body: anyObject(), provider_options: anyObject(), moderation: str(), mask: str(), bbox_list: arr({}),
    color_palette: arr({}), background: str('auto, transparent, opaque'), output_compression: int('percentage'), input_fidelity: str(),
    user: str(), thinking_level: str(), media_resolution: str(),
  }, ['model', 'prompt']),

  VideoCreate: obj({
    model: str(), prompt: str(), resolution: str(), duration: int('seconds'), aspect_ratio: str(), generate_audio: bool(), return_last_frame: bool(),
    seed: int(), watermark: bool(),
    callback_url: str('HTTPS; enables the completion callback', { format: 'uri' }), request_id: str('caller business id echoed in the callback'),
  }, ['model', 'prompt'], undefined, { additionalProperties: true }),

  TranscriptionRequest: obj({
    model: str(), file: str('audio file', { contentMediaType: 'application/octet-stream' }), file_url: str(), mime_type: str('required with file_url'),
    audio_data: str('inline audio'), language: str(), prompt: str(), response_format: str(), audio_format: str(), codec: str(), hotwords: str(),
    request_id: str(), user_id: str(), uid: str(), temperature: num(), segment_duration: num(), timestamp_granularities: arr(str()),
    stream: bool(), enable_itn: bool(), enable_punc: bool(), enable_channel_split: bool(), enable_ddc: bool(), enable_speaker_info: bool(),
    show_utterances: bool(), enable_nonstream: bool(), corpus: anyObject(), metadata: anyObject(), extra_body: anyObject(), provider_options: anyObject(),
    rate: int('Hz'), bits: int(), channel: int(),
  }, ['model'], 'Exactly one of file or file_url.'),
  SpeechRequest: obj({ model: str(), input: str(), voice: str(), response_format: str(), speed: num() }, ['model', 'input'], undefined, { additionalProperties: true }),
};
