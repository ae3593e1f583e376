import SwaggerParser from '@apidevtools/swagger-parser';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { openApiDocument } from '@gw/openapi';
import { OPENAPI_PATH } from './openapi-route';
import { matchRoute } from './proxy/route-table';

/**
 * The OpenAPI document against the code and the spec: every documented path is routed by the edge and every
 * path in the edge's route table is documented; every field of the spec's resource and request-body tables is
 * in the document's schemas; and the document is valid OpenAPI 3.1.
 */
const ROOT = path.resolve(__dirname, '../../..');
const SPEC = readFileSync(path.join(ROOT, 'docs/spec/gateway-api.md'), 'utf8');

/** The repository's copy of the contract must be the contract: where ../shared sits beside the checkout (CI), they are compared. */
const SHARED_SPEC = path.join(ROOT, '..', 'shared', 'spec', 'gateway-api.md');
test('docs/spec/gateway-api.md is the shared contract, unchanged', () => {
  if (!existsSync(SHARED_SPEC)) return;
  expect(SPEC).toBe(readFileSync(SHARED_SPEC, 'utf8'));
});
const ROUTE_TABLE_SOURCE = readFileSync(path.join(__dirname, 'proxy/route-table.ts'), 'utf8');

type Schema = { $ref?: string; type?: unknown; properties?: Record<string, Schema>; items?: Schema; oneOf?: Schema[]; allOf?: Schema[] };
type Operation = { security?: Record<string, unknown>[]; requestBody?: { content: Record<string, { schema: Schema }> } };
const doc = openApiDocument as unknown as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** Operations a service declares through a constant (`${SIGNED_PATH}/:token`), which the router scan cannot read. */
const DECLARED_WITH_A_CONSTANT = ['GET /v1/media/signed/{token}'];

const documentedPaths = Object.keys(doc.paths);
const concrete = (template: string) => template.replace(/\{[^}]+\}/g, 'x1');

describe('the OpenAPI document and the edge route table', () => {
  test('every documented path is routed by the edge (or answered by the edge itself)', () => {
    const unrouted = documentedPaths.filter((p) => p !== OPENAPI_PATH && !matchRoute(concrete(p)));
    expect(unrouted).toEqual([]);
    expect(matchRoute(OPENAPI_PATH)).toBeNull();
  });

  test('every path in the route table is documented', () => {
    const literals = [...ROUTE_TABLE_SOURCE.matchAll(/'(\/v1\/[^']*)'/g)].map((m) => m[1].replace(/\/$/, ''));
    expect(literals.length).toBeGreaterThan(10);
    const undocumented = literals.filter((l) => !documentedPaths.some((p) => p === l || p.startsWith(`${l}/`)));
    expect(undocumented).toEqual([]);
  });

  test("each operation's security says what the edge enforces: a key, an optional key, or x-api-key too", () => {
    const mismatched: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      if (p === OPENAPI_PATH) continue;
      const route = matchRoute(concrete(p))!;
      for (const [method, operation] of Object.entries(ops)) {
        const security = operation.security ?? [];
        const optional = security.length === 0 || security.some((s) => Object.keys(s).length === 0);
        const xApiKey = security.some((s) => 'apiKey' in s);
        if (optional !== (route.auth === 'optional') || xApiKey !== route.allowXApiKey) mismatched.push(`${method.toUpperCase()} ${p}`);
      }
    }
    expect(mismatched).toEqual([]);
  });
});

/** `METHOD /path/{param}` of every route a service's express router declares (`:p` and `*p` as `{p}`). */
function serviceRoutes(): string[] {
  const servicesDir = path.join(ROOT, 'services');
  const files = readdirSync(servicesDir).flatMap((svc) => {
    const src = path.join(servicesDir, svc, 'src');
    try {
      return (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => path.join(src, f));
    } catch {
      return [];
    }
  });
  const routes = files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\brouter\.(get|post|put|patch|delete)\(\s*'(\/v1\/[^']*)'/g)]
    .map((m) => `${m[1].toUpperCase()} ${m[2].replace(/[:*]([A-Za-z_]+)/g, '{$1}')}`));
  return [...new Set(routes)].sort();
}

describe('the OpenAPI document and the services\' routers', () => {
  const routes = serviceRoutes();
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));

  test('every route a service declares is documented, method and path', () => {
    expect(routes.length).toBeGreaterThan(25);
    expect(routes.filter((r) => !documented.includes(r))).toEqual([]);
  });

  test('every documented operation is declared by a service (the edge answers its own document)', () => {
    expect(documented.filter((op) => op !== `GET ${OPENAPI_PATH}` && !routes.includes(op) && !DECLARED_WITH_A_CONSTANT.includes(op))).toEqual([]);
  });
});

// --- the spec's tables ---------------------------------------------------------------------------------------

/** `| a | b |` rows of the first table after `start` (header and separator skipped), until the next heading. */
function tableRows(section: string): string[][] {
  const lines = section.split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  if (first < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

/** Field names in a table's first cell: "a, b (type), c(d)" -> a, b, d; "x[].y" kept as a nested path. */
function fieldNames(cell: string): string[] {
  return cell.split(',').map((part) => {
    const t = part.trim().replace(/\s+\(.*\)$/, '');
    const inner = /^[a-z_]+\(([a-z_]+)\)$/.exec(t);
    const name = inner ? inner[1] : t;
    if (!/^[a-z_][a-z0-9_]*(\[\]\.[a-z_][a-z0-9_]*)?$/.test(name)) throw new Error(`unreadable field name in the spec: "${part}"`);
    return name;
  });
}

/** `### heading` sections between two `## ` headings. */
function sections(from: string, to: string): { heading: string; body: string }[] {
  const part = SPEC.slice(SPEC.indexOf(`## ${from}`), SPEC.indexOf(`## ${to}`));
  return part.split(/^### /m).slice(1).map((s) => ({ heading: s.slice(0, s.indexOf('\n')).trim(), body: s }));
}

const pascal = (heading: string) => heading.replace(/\(.*\)/, '').split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');

function resolve(schema: Schema | undefined): Schema[] {
  if (!schema) return [];
  if (schema.$ref) return resolve(doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]);
  return [schema, ...(schema.oneOf ?? []).flatMap(resolve), ...(schema.allOf ?? []).flatMap(resolve)];
}

/** The schema of `field` ("a" or "a[].b") in `schema`, if the document has it. */
function property(schema: Schema, field: string): Schema | undefined {
  const [head, rest] = field.split('[].');
  const found = resolve(schema).map((s) => s.properties?.[head]).find(Boolean);
  if (!found || rest === undefined) return found;
  const items = resolve(found).map((s) => s.items).find(Boolean);
  return items ? property(items, rest) : undefined;
}

const missingFields = (schema: Schema, fields: string[]) => fields.filter((f) => !property(schema, f));

describe("the spec's fields are in the document", () => {
  const resources = sections('Resources and their fields', 'States and transitions').filter((s) => tableRows(s.body).length > 0);

  test('the spec has the resource tables this check reads', () => {
    expect(resources.map((r) => pascal(r.heading))).toEqual(expect.arrayContaining(['ChatCompletion', 'Usage', 'AsyncChatJob', 'Response', 'Model',
      'ImageGenerationResult', 'VideoTask', 'TranscriptionResult', 'Batch', 'BatchSupportedModelItem']));
  });

  test.each(resources.map((r) => [pascal(r.heading), r.body] as const))('resource %s: every field of its table', (name, body) => {
    const schema = doc.components.schemas[name];
    expect(schema).toBeDefined();
    expect(missingFields(schema, tableRows(body).flatMap((row) => fieldNames(row[0])))).toEqual([]);
  });

  const bodies = sections('Endpoints', 'Authentication')
    .map((s) => ({ ...s, route: /^(POST|GET|PUT|PATCH|DELETE) (\/v1\/\S+)$/.exec(s.heading) }))
    .filter((s) => s.route && /^\| Field /m.test(s.body));

  test('the spec has the request-body tables this check reads', () => {
    expect(bodies.map((b) => b.heading)).toEqual(['POST /v1/chat/completions', 'POST /v1/responses', 'POST /v1/images/generations', 'POST /v1/audio/transcriptions']);
  });

  test.each(bodies.map((b) => [b.heading, b.route!, b.body] as const))('request body of %s: every field of its table, in every content type', (_h, route, body) => {
    const operation = doc.paths[route[2]]?.[route[1].toLowerCase()];
    const contents = Object.values(operation?.requestBody?.content ?? {});
    expect(contents.length).toBeGreaterThan(0);
    const fields = tableRows(body).flatMap((row) => fieldNames(row[0]));
    for (const content of contents) expect(missingFields(content.schema, fields)).toEqual([]);
  });

  test('POST /v1/videos: the fields the spec names', () => {
    const sentence = /Fields known: ([^\n]*?)\. The complete body/.exec(SPEC)![1];
    const fields = [...sentence.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(fields).toContain('callback_url');
    expect(missingFields(doc.paths['/v1/videos'].post.requestBody!.content['application/json'].schema, fields)).toEqual([]);
  });

  test('the error envelope: every field of the Errors table, with the inner error object', () => {
    const errors = SPEC.slice(SPEC.indexOf('## Errors'), SPEC.indexOf('## Limits'));
    const rows = tableRows(errors);
    const envelope = doc.components.schemas.ErrorEnvelope;
    expect(missingFields(envelope, rows.map((r) => r[0]))).toEqual([]);
    const inner = [...rows.find((r) => r[0] === 'error')![1].matchAll(/`([A-Za-z_]+)`/g)].map((m) => m[1]);
    expect(inner).toEqual(['message', 'type', 'param', 'code', 'traceId']);
    expect(missingFields(property(envelope, 'error')!, inner)).toEqual([]);
  });

  test('the check fails on a missing field', () => {
    const { model: _dropped, ...rest } = doc.components.schemas.VideoTask.properties!;
    expect(missingFields({ type: 'object', properties: rest }, ['model', 'status'])).toEqual(['model']);
    expect(missingFields(doc.components.schemas.ChatCompletion, ['choices[].finish_reason', 'choices[].nope'])).toEqual(['choices[].nope']);
  });
});

describe('the document is valid OpenAPI', () => {
  test('validated by swagger-parser (schema and references)', async () => {
    await expect(SwaggerParser.validate(structuredClone(openApiDocument) as never)).resolves.toBeDefined();
  });

  test('the validator refuses a broken document', async () => {
    const broken = structuredClone(openApiDocument) as unknown as { paths: Record<string, Record<string, { responses?: unknown; requestBody?: unknown }>> };
    broken.paths['/v1/chat/completions'].post.requestBody = { content: { 'application/json': { schema: { $ref: '#/components/schemas/NoSuchSchema' } } } };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });
});
