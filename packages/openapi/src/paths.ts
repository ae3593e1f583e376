import { answer, cursorList, dataOf, json, list, op, orderedCursorParams, pathParam, queryParam, rangeParam, rangeResponses, sse, unsupported } from './operations';
import { anyObject, arr, bool, int, obj, oneOf, ref, str } from './schema-helpers';

const multipart = (schema: string) => ({ 'multipart/form-data': { schema: ref(schema) } });
const jsonOrStream = (schema: string, stream: string) => ({ ...json(ref(schema)), ...sse(stream) });
const requestId = pathParam('request_id', 'a request id (br-...) or a provider id; ids containing slashes are accepted as they are');

/** Every public route the edge serves, by path. */
export const paths: Record<string, Record<string, unknown>> = {
  '/v1/chat/completions': {
    post: op({
      summary: 'Chat completion (JSON, or server-sent events with stream: true)', tags: ['chat'], body: json(ref('ChatCompletionRequest')),
      responses: { 200: { description: 'A chat completion; streamed as `data: {chunk}` lines ending with `data: [DONE]`', content: jsonOrStream('ChatCompletion', 'chat.completion.chunk events') } },
    }),
  },
  '/v1/async/chat/completions': {
    post: op({ summary: 'Queue a chat completion job', tags: ['async chat'], body: json(ref('AsyncChatCompletionRequest')), responses: { 200: answer(ref('AsyncChatJob'), 'The job, queued') } }),
  },
  '/v1/async/chat/completions/{job_id}': {
    get: op({ summary: 'Poll a job', tags: ['async chat'], params: [pathParam('job_id')], responses: { 200: answer(ref('AsyncChatJob')) } }),
  },
  '/v1/async/chat/completions/{job_id}/cancel': {
    post: op({ summary: 'Cancel a non-terminal job', tags: ['async chat'], params: [pathParam('job_id')], responses: { 200: answer(ref('AsyncChatJob')) } }),
  },
  '/v1/responses': {
    post: op({
      summary: 'Responses passthrough (stateless)', tags: ['responses'], body: json(ref('ResponseRequest')),
      description: '`previous_response_id`, `conversation`, `background: true` and `store: true` answer 501 `unsupported_feature`.',
      responses: { 200: { description: 'A response, or its events when streamed', content: jsonOrStream('Response', 'response.* events') } },
    }),
  },
  '/v1/responses/{response_id}': { get: unsupported('Retrieve a stored response (unsupported)', [pathParam('response_id')]) },
  '/v1/responses/{response_id}/input_items': { get: unsupported('List input items (unsupported)', [pathParam('response_id')]) },
  '/v1/responses/{response_id}/cancel': { post: unsupported('Cancel a background response (unsupported)', [pathParam('response_id')]) },
  '/v1/messages': {
    post: op({
      summary: 'Messages passthrough (provider-native)', tags: ['messages'], auth: 'key-or-x-api-key', body: json(ref('MessagesRequest')),
      responses: { 200: { description: 'A provider-native message, or its events when streamed', content: jsonOrStream('ProviderNative', 'message_start ... message_stop events') } },
    }),
  },
  '/v1/messages/count_tokens': {
    post: op({ summary: 'Count the input tokens of a messages body (not billed)', tags: ['messages'], auth: 'key-or-x-api-key', body: json(ref('CountTokensRequest')), responses: { 200: answer(ref('CountTokensResult')) } }),
  },
  '/v1/models': { get: op({ summary: 'The model catalogue', tags: ['models'], auth: 'optional', responses: { 200: answer(list('Model')) } }) },
  '/v1/models/{model_id}': {
    get: op({ summary: 'One model', tags: ['models'], auth: 'optional', params: [pathParam('model_id', 'the id from the list (may contain slashes)')], responses: { 200: answer(ref('Model')) } }),
  },

  '/v1/key': {
    get: op({ summary: 'The key of this request', tags: ['keys'], plainErrors: true, responses: { 200: answer(dataOf({ allOf: [ref('Key'), obj({ is_management_key: bool() })] })) } }),
  },
  '/v1/keys': {
    get: op({
      summary: 'List the account\'s keys (management key)', tags: ['keys'], plainErrors: true,
      params: [queryParam('offset', int()), queryParam('include_disabled', bool())], responses: { 200: answer(dataOf(arr(ref('Key')))) },
    }),
    post: op({
      summary: 'Create a key; its secret is shown only here', tags: ['keys'], plainErrors: true, body: json(ref('KeyCreate')),
      responses: { 201: answer(obj({ data: ref('Key'), key: str('the secret, shown once') }, ['data', 'key']), 'Created') },
    }),
  },
  '/v1/keys/{hash}': {
    patch: op({ summary: 'Update a key', tags: ['keys'], plainErrors: true, params: [pathParam('hash')], body: json(ref('KeyUpdate')), responses: { 200: answer(dataOf(ref('Key'))) } }),
    delete: op({ summary: 'Delete a key', tags: ['keys'], plainErrors: true, params: [pathParam('hash')], responses: { 200: answer(obj({ deleted: bool() }, ['deleted'])) } }),
  },

  '/v1/billing/balance': { get: op({ summary: 'Spendable balance (wallet + credit)', tags: ['billing'], responses: { 200: answer(dataOf(ref('Balance'))) } }) },
  '/v1/billing/requests/{request_id}': {
    get: op({ summary: 'Usage and charges of one call', tags: ['billing'], params: [requestId], responses: { 200: answer(dataOf(ref('RequestRecord'))) } }),
  },
  '/v1/billing/requests/{request_id}/archive': {
    get: op({ summary: 'The archived call (request and response bodies)', tags: ['billing'], params: [requestId], responses: { 200: answer(dataOf(ref('ArchivedCall'))) } }),
  },
  '/v1/usage': {
    get: op({
      summary: 'Usage statistics of the account over time', tags: ['usage'],
      params: [
        queryParam('from', str('ISO 8601 or Unix seconds')), queryParam('to', str('ISO 8601 or Unix seconds')),
        queryParam('interval', oneOf(['minute', 'hour', 'day'])), queryParam('group_by', str('comma-separated: model, key, provider, api_type')),
      ],
      responses: { 200: answer(list('UsageRow')) },
    }),
  },

  '/v1/files': {
    get: op({ summary: 'List files', tags: ['files'], params: orderedCursorParams, responses: { 200: answer(cursorList('FileObject')) } }),
    post: op({ summary: 'Upload a JSONL batch input file', tags: ['files'], body: multipart('FileUpload'), responses: { 200: answer(ref('FileObject')) } }),
  },
  '/v1/files/{file_id}': {
    get: op({ summary: 'One file', tags: ['files'], params: [pathParam('file_id')], responses: { 200: answer(ref('FileObject')) } }),
    delete: op({ summary: 'Delete a file', tags: ['files'], params: [pathParam('file_id')], responses: { 200: answer(ref('Deleted')) } }),
  },
  '/v1/files/{file_id}/content': {
    get: op({
      summary: 'The file\'s bytes (input, output or error JSONL)', tags: ['files'], params: [pathParam('file_id')],
      responses: { 200: { description: 'The raw bytes', content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } } },
    }),
  },
  '/v1/batches': {
    get: op({ summary: 'List batches', tags: ['batches'], params: orderedCursorParams, responses: { 200: answer(cursorList('Batch')) } }),
    post: op({ summary: 'Create a batch', tags: ['batches'], body: json(ref('BatchCreate')), responses: { 200: answer(ref('Batch')) } }),
  },
  '/v1/batches/models': {
    get: op({ summary: 'Models a batch may use', tags: ['batches'], responses: { 200: answer(list('BatchSupportedModelItem')) } }),
  },
  '/v1/batches/{batch_id}': {
    get: op({ summary: 'One batch', tags: ['batches'], params: [pathParam('batch_id')], responses: { 200: answer(ref('Batch')) } }),
  },
  '/v1/batches/{batch_id}/cancel': {
    post: op({ summary: 'Cancel a batch', tags: ['batches'], params: [pathParam('batch_id')], responses: { 200: answer(ref('Batch')) } }),
  },

  '/v1/webhooks/settings': {
    get: op({ summary: 'The account\'s default webhook', tags: ['webhooks'], responses: { 200: answer(dataOf(ref('WebhookSettings'))) } }),
    put: op({ summary: 'Set the default webhook URL, optionally rotating its signing secret (shown once)', tags: ['webhooks'], body: json(ref('WebhookSettingsUpdate')), responses: { 200: answer(dataOf(ref('WebhookSettings'))) } }),
  },
  '/v1/webhooks/test': {
    post: op({ summary: 'Send a signed webhook.test event to the default URL', tags: ['webhooks'], responses: { 202: answer(dataOf(ref('WebhookTestEvent')), 'Queued') } }),
  },
  '/v1/webhooks/deliveries': {
    get: op({ summary: 'The delivery log, newest first (order=asc: oldest first)', tags: ['webhooks'], params: orderedCursorParams, responses: { 200: answer(cursorList('WebhookDeliveryAttempt')) } }),
  },

  '/v1/images': { get: op({ summary: 'List image records', tags: ['images'], params: orderedCursorParams, responses: { 200: answer(cursorList('ImageRecord')) } }) },
  '/v1/images/generations': {
    post: op({
      summary: 'Generate images (answered in the request)', tags: ['images'], description: 'With `Svc-Native-Params: true` the body is the supplier\'s native JSON.',
      body: json(ref('ImageGenerationRequest')), responses: { 200: { description: 'The result, or its events when streamed', content: jsonOrStream('ImageGenerationResult', 'partial image events') } },
    }),
  },
  '/v1/images/edits': {
    post: op({ summary: 'Edit images from text plus input images', tags: ['images'], body: { ...json(ref('ImageGenerationRequest')), ...multipart('ImageGenerationRequest') }, responses: { 200: answer(ref('ImageGenerationResult')) } }),
  },
  '/v1/images/{image_id}': {
    get: op({ summary: 'One image record', tags: ['images'], params: [pathParam('image_id')], responses: { 200: answer(ref('ImageRecord')) } }),
    delete: op({ summary: 'Delete an image', tags: ['images'], params: [pathParam('image_id')], responses: { 200: answer(ref('Deleted')) } }),
  },
  '/v1/images/{image_id}/content': {
    get: op({ summary: 'Download an image', tags: ['images'], params: [pathParam('image_id'), rangeParam], responses: { 200: { description: 'The image bytes', content: { 'image/*': { schema: { type: 'string', contentMediaType: 'image/*' } } } }, 302: { description: 'Redirect to a signed URL' }, ...rangeResponses(ref('ErrorEnvelope')) } }),
  },
  '/v1/videos': {
    post: op({ summary: 'Submit a video generation task', tags: ['videos'], description: 'With `Svc-Native-Params: true` the body is the supplier\'s native JSON.', body: json(ref('VideoCreate')), responses: { 200: answer(ref('VideoTask')) } }),
  },
  '/v1/videos/{video_id}': { get: op({ summary: 'Poll a video task', tags: ['videos'], params: [pathParam('video_id')], responses: { 200: answer(ref('VideoTask')) } }) },
  '/v1/videos/{video_id}/content': {
    get: op({
      summary: 'Download a completed video', tags: ['videos'], params: [pathParam('video_id'), queryParam('format', oneOf(['redirect', 'url', 'binary']), 'default redirect'), rangeParam],
      responses: {
        200: { description: '`format=url`: the signed URL; `format=binary`: the video', content: { ...json(ref('VideoContentUrl')), 'video/mp4': { schema: { type: 'string', contentMediaType: 'video/mp4' } } } },
        302: { description: '`format=redirect`: to a fresh signed URL' },
        ...rangeResponses(ref('ErrorEnvelope')),
      },
    }),
  },
  '/v1/media/signed/{token}': {
    get: op({
      summary: 'Fetch stored media by a signed, short-lived link (the link is the credential; no key)', tags: ['media'], auth: 'none',
      params: [pathParam('token'), rangeParam],
      responses: {
        200: { description: 'The media bytes', content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
        ...rangeResponses(ref('ErrorEnvelope')),
        403: answer(ref('ErrorEnvelope'), 'A bad signature, or an expired link'),
        404: answer(ref('ErrorEnvelope'), 'Not a link'),
      },
    }),
  },
  '/v1/audio/transcriptions': {
    post: op({ summary: 'Transcribe audio', tags: ['audio'], body: { ...multipart('TranscriptionRequest'), ...json(ref('TranscriptionRequest')) }, responses: { 200: answer(ref('TranscriptionResult')) } }),
  },
  '/v1/audio/speech': {
    post: op({
      summary: 'Synthesize speech', tags: ['audio'], description: 'Supports `Svc-Native-Params: true`.', body: json(ref('SpeechRequest')),
      responses: { 200: { description: 'The audio', content: { 'audio/*': { schema: { type: 'string', contentMediaType: 'audio/*' } } } } },
    }),
  },
  '/v1/openapi.json': {
    get: op({ summary: 'This document', tags: ['meta'], auth: 'none', responses: { 200: answer(anyObject('an OpenAPI 3.1 document')) } }),
  },
};
