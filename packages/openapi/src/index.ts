import { accountSchemas } from './account-schemas';
import { paths } from './paths';
import { requestSchemas } from './request-schemas';
import { resourceSchemas } from './resource-schemas';

/** The public API as an OpenAPI 3.1 document, served by the edge at `GET /v1/openapi.json`. */
export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Inference gateway API',
    version: '1.0.0',
    description: 'One OpenAI-compatible HTTP API in front of many model providers. Every error answers the envelope '
      + '`{"code","error":{"message","type","param","code","traceId"},"traceId"}` (the key endpoints: plain JSON). '
      + 'Every call returns `x-request-id` (its billing id) and `x-trace-id`; a W3C `traceparent` sent with a call is honoured.',
  },
  servers: [{ url: '/', description: 'the gateway\'s public port' }],
  security: [{ bearer: [] }],
  paths,
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API key>`' },
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'messages-style clients' },
    },
    schemas: { ...resourceSchemas, ...requestSchemas, ...accountSchemas },
    headers: {
      TraceId: { description: 'The trace id of the request (a W3C trace id; the caller\'s when it sent a valid `traceparent`)', schema: { type: 'string', pattern: '^[0-9a-f]{32}$' } },
      RequestId: { description: 'The platform billing id of a call (`br-<UUIDv4>`), for the billing lookup; on calls that have one', required: false, schema: { type: 'string' } },
    },
  },
} as const;

/** The document as served: serialised once. */
export const openApiJson = JSON.stringify(openApiDocument);
