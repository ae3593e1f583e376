import type express from 'express';
import { openApiJson } from '@gw/openapi';

export const OPENAPI_PATH = '/v1/openapi.json';

/** `GET /v1/openapi.json`: the public API's OpenAPI document, answered by the edge itself (no key needed). */
export const serveOpenApi: express.RequestHandler = (req, res, next) => {
  if (req.path !== OPENAPI_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
  res.setHeader('cache-control', 'public, max-age=300');
  res.type('application/json').send(openApiJson);
};
