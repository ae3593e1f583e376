import { anyObject, arr, bool, int, num, obj, oneOf, orNull, ref, str, type Schema } from './schema-helpers';

/**
 * The spec's resources (gateway-api.md, "Resources and their fields"), one component each, named after the
 * spec's heading; the field names are the spec's, exactly. Shapes the spec leaves open follow API-NOTES.md.
 */
const codeMessage = obj({ code: str(), message: str() }, ['code', 'message']);

export const resourceSchemas: Record<string, Schema> = {
  ErrorEnvelope: obj({
    code: str('the HTTP status as text'),
    error: obj({
      message: str(), type: str(), param: orNull(str('the parameter at fault')), code: str(), traceId: str('request correlation id'),
    }, ['message', 'type', 'param', 'code', 'traceId']),
    traceId: str('request correlation id'),
  }, ['code', 'error', 'traceId'], 'The error body of every failure (the key endpoints use PlainError).'),
  PlainError: obj({ error: obj({ code: int('the HTTP status'), message: str(), param: orNull(str()) }, ['code', 'message']) }, ['error'],
    'Errors of the key endpoints (plain JSON, OpenRouter shape).'),

  Usage: obj({
    prompt_tokens: int(), completion_tokens: int(), total_tokens: int(), input_tokens: int(), output_tokens: int(),
    generated_images: int(), audio_duration_seconds: num(), video_duration_seconds: num(), provider_request_id: str('upstream correlation'),
  }, [], 'Token and media usage; every field appears only when the provider returns it.'),

  ChatMessage: obj({
    role: oneOf(['system', 'user', 'assistant', 'tool']),
    content: { oneOf: [{ type: 'string' }, { type: 'array', items: anyObject('a structured content part') }, { type: 'null' }] },
    name: str(), tool_call_id: str('for tool messages'), refusal: orNull(str('set when a structured response is refused')),
    tool_calls: arr(anyObject()),
  }, ['role']),
  ChatCompletion: obj({
    id: str('unique completion id'), object: oneOf(['chat.completion']), created: int('Unix timestamp'), model: str('model used'),
    choices: arr(obj({
      index: int('choice index'), message: ref('ChatMessage'), logprobs: orNull(anyObject('null when log probabilities were not requested')),
      finish_reason: oneOf(['stop', 'length', 'tool_calls']),
    }, ['index', 'message', 'finish_reason'])),
    usage: ref('Usage'),
  }, ['id', 'object', 'created', 'model', 'choices']),
  AsyncChatJob: obj({
    id: str('prefix chatjob_'), object: oneOf(['chat.completion.job']),
    status: oneOf(['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'expired']), model: str('public model name'),
    request_id: str('platform billing id br-<UUIDv4>', { pattern: '^br-' }), qos: str('typically completion'),
    created_at: int('Unix timestamp'), expires_at: int('estimated expiry, not a hard stop'),
    in_progress_at: int(), completed_at: int(), failed_at: int(), cancelled_at: int(), expired_at: int(), cancel_requested_at: int(),
    completion: ref('ChatCompletion'), usage: ref('Usage'), error: codeMessage,
  }, ['id', 'object', 'status', 'model', 'request_id', 'created_at']),

  Response: obj({
    id: str(), object: oneOf(['response']), created_at: num('Unix seconds'), model: str(),
    status: oneOf(['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete']),
    error: orNull(codeMessage), incomplete_details: orNull(obj({ reason: oneOf(['max_output_tokens', 'content_filter']) })),
    instructions: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }, { type: 'null' }] },
    max_output_tokens: orNull(num()),
    output: arr(obj({
      id: str(), type: str(), status: oneOf(['in_progress', 'completed', 'incomplete']), role: str(), content: arr(anyObject()), call_id: str(), name: str(),
      arguments: str(), output: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] }, summary: arr(anyObject()), encrypted_content: str(),
    })),
    output_text: str(), parallel_tool_calls: bool(), previous_response_id: orNull(str()),
    prompt: orNull(obj({ id: str(), variables: anyObject(), version: str() })), prompt_cache_key: str(), prompt_cache_retention: oneOf(['in_memory', '24h']),
    reasoning: orNull(obj({
      context: oneOf(['auto', 'current_turn', 'all_turns']), effort: oneOf(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']),
      summary: orNull(oneOf(['auto', 'concise', 'detailed'])),
    })),
    safety_identifier: str(), service_tier: oneOf(['auto', 'default', 'flex', 'scale', 'priority']), store: bool(),
    temperature: num(), top_p: num(), top_logprobs: num(), text: obj({ format: anyObject(), verbosity: oneOf(['low', 'medium', 'high']) }),
    tool_choice: { oneOf: [{ type: 'string' }, { type: 'object' }] }, tools: arr(anyObject()), truncation: oneOf(['auto', 'disabled']),
    usage: obj({ input_tokens: num(), output_tokens: num(), total_tokens: num(), input_tokens_details: anyObject(), output_tokens_details: anyObject() }),
    user: str('deprecated'), metadata: anyObject(),
  }, ['id', 'object', 'created_at', 'model', 'status', 'output']),

  Model: obj({
    id: str('value to pass as model'), object: oneOf(['model']), created: int('Unix timestamp'), owned_by: str('publisher display name'),
    architecture: obj({ input_modalities: arr(str()), output_modalities: arr(str()), tokenizer: orNull(str()) }),
    canonical_slug: str('equals id'), context_length: orNull(int()), default_parameters: anyObject(), description: str(),
    expiration_date: orNull(str()), model_hub_id: orNull(str('identifier on a public model hub')), knowledge_cutoff: orNull(str()),
    links: obj({ details: str('service model detail path') }), name: str('display name'),
    per_request_limits: obj({ completion_tokens: orNull(int()), prompt_tokens: orNull(int()) }),
    supported_parameters: arr(str()),
    parameter_schema: { type: 'object', additionalProperties: obj({
      type: str(), options: orNull(arr({})), default: {},
      min: { description: 'least value; for a string, least length in characters' },
      max: { description: 'greatest value; for a string, greatest length in characters' },
    }) },
    supported_voices: orNull(arr(str())),
  }, ['id', 'object', 'created', 'owned_by']),

  ImageGenerationResult: obj({
    created: int('Unix timestamp'), model: str('model that served the request'),
    data: arr(obj({ url: str(), b64_json: str(), output_format: str(), size: str('<width>x<height>'), error: orNull(codeMessage) })),
    usage: obj({
      generated_images: int(), input_images: int(), prompt_tokens: int(), completion_tokens: int(), input_tokens: int(), output_tokens: int(),
      total_tokens: int(), input_tokens_details: anyObject(), output_tokens_details: anyObject(), output_text_tokens: int(), output_image_tokens: int(),
      generated_images_count: int(), image_count: int(), cache_read_tokens: int(), search_queries_count: int(), resolution: str('actual tier'),
    }),
    error: codeMessage,
  }, ['created', 'data']),

  VideoTask: obj({
    id: str('video task id'), object: oneOf(['video']), status: oneOf(['queued', 'in_progress', 'completed', 'failed']),
    model: str(), prompt: str(), created_at: int(), updated_at: int(),
    parameters: anyObject('echo of generation parameters (resolution, duration, aspect_ratio, seed, audio, watermark, video_mode)'),
    response: anyObject('raw provider details'), url: str('presigned video URL when completed'), video_url: str(),
    duration: int('final duration in seconds'), content: obj({ last_frame_url: str(), video_url: str(), file_url: str() }),
    error: codeMessage, usage: ref('Usage'),
    resolution: str(), fileformat: str(), frames: int(), generate_audio: bool(), ratio: str(), progress: num(),
  }, ['id', 'object', 'status', 'model', 'created_at']),

  TranscriptionResult: obj({
    text: str(), model: str(), language: str('with verbose_json'), duration: num('seconds; with verbose_json'), task: str(),
    segments: arr(obj({ id: int(), start: num(), end: num(), text: str() })),
    utterances: arr(obj({ start: num(), end: num(), text: str(), speaker: str() })),
  }, ['text']),

  Batch: obj({
    id: str('prefix batch_'), object: oneOf(['batch']), endpoint: oneOf(['/v1/chat/completions']),
    status: oneOf(['validating', 'in_progress', 'finalizing', 'cancelling', 'cancelled', 'completed', 'failed', 'expired']),
    execution_preference: oneOf(['auto', 'provider', 'platform']), execution: oneOf(['provider', 'platform']),
    fallback_from_provider: bool(), input_file_id: str(), client_model: str('public model name from the JSONL'),
    output_file_id: orNull(str()), error_file_id: orNull(str()), completion_window: oneOf(['24h']),
    usage_billing: orNull(anyObject('list and charged amounts after finalize')),
    request_counts: orNull(obj({ total: int(), completed: int(), failed: int() }, ['total', 'completed', 'failed'])),
    created_at: int(), in_progress_at: orNull(int()), completed_at: orNull(int()), failed_at: orNull(int()), expired_at: orNull(int()),
    cancelled_at: orNull(int()), expires_at: int('created plus 24 hours; an estimate'), metadata: orNull(anyObject()),
    errors: orNull(obj({ message: str(), code: str(), type: str(), stage: str(), upstream_http_status: int(), upstream_message: str() })),
  }, ['id', 'object', 'endpoint', 'status', 'input_file_id', 'completion_window', 'created_at']),
  BatchSupportedModelItem: obj({
    id: str(), object: oneOf(['model']), supports_batch: bool(), supports_provider_batch: bool(), display_name: str(), model_type: str(),
  }, ['id', 'object', 'supports_batch', 'supports_provider_batch']),
};
