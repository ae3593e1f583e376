/** The gateway's chat request body (spec: POST /v1/chat/completions). Provider-free. */

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

export interface TextContentPart {
  type: 'text';
  text: string;
}

export interface ImageUrlContentPart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** Structured parts for multimodal models; other part types are passed on as given. */
export type ChatContentPart = TextContentPart | ImageUrlContentPart | { type: string; [key: string]: unknown };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: ChatRole;
  /** null only for an assistant turn that consisted of tool calls. */
  content: string | ChatContentPart[] | null;
  name?: string;
  /** For `tool` messages: the call this message answers. */
  tool_call_id?: string;
  /** Not in the spec's table, but a multi-turn tool conversation must replay the assistant's calls. */
  tool_calls?: ChatToolCall[];
}

export interface ChatFunctionDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export interface ChatTool {
  type: 'function' | (string & {});
  function: ChatFunctionDefinition;
}

export type ChatToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function' | (string & {}); function: { name: string } };

export type ReasoningEffort = 'xhigh' | 'high' | 'medium' | 'low' | 'minimal' | 'none';

export interface ReasoningOptions {
  enabled?: boolean;
  effort?: ReasoningEffort;
  /** Used for execution when supplied together with `effort`. */
  max_tokens?: number;
  /** Reason internally without returning reasoning text. */
  exclude?: boolean;
}

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; strict?: boolean; schema?: Record<string, unknown>; description?: string };
    };

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];

  temperature?: number;
  top_p?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  max_completion_tokens?: number;
  /** Legacy cap, accepted by async chat and most OpenAI-style upstreams. */
  max_tokens?: number;
  top_k?: number;
  context_length?: number;

  stream?: boolean;
  stream_options?: { include_usage?: boolean };

  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;

  previous_response_id?: string;
  conversation?: Record<string, unknown>;
  prompt_cache_key?: string;
  /** The caller's end user, for the provider's abuse monitoring (OpenAI's older field; Anthropic's `metadata.user_id`). */
  user?: string;
  /** The same, as a hashed or opaque id (OpenAI's successor to `user`). */
  safety_identifier?: string;
  store?: boolean;
  truncation?: string;
  include?: string[];

  /** Application metadata for the gateway; never sent upstream. */
  metadata?: Record<string, unknown>;
  /** Extra fields merged into the upstream body; never one the gateway validates or sets (see ChatCapabilities). */
  extra_body?: Record<string, unknown>;
  /** Upstream configuration; no route honours it yet, so setting it is refused (see ChatCapabilities). */
  provider_options?: Record<string, unknown>;
  /** Structured-output parameters. */
  schema_params?: Record<string, unknown>;
  network_search?: boolean;

  reasoning?: ReasoningOptions;
  response_format?: ResponseFormat;
  logprobs?: boolean;
  /** Requires `logprobs: true`. */
  top_logprobs?: number;
  stop?: string | string[];
  verbosity?: string;
  seed?: number;
  n?: number;
  /** Token id -> bias. */
  logit_bias?: Record<string, number>;
}
