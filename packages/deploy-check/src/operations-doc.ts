import * as fs from 'node:fs';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { batchConfigSchema } from '@gw/batch/src/config';
import { billingConfigSchema } from '@gw/billing/src/config';
import { edgeConfigSchema } from '@gw/edge/src/config';
import { inferenceConfigSchema } from '@gw/inference/src/config';
import { keysConfigSchema } from '@gw/keys/src/config';
import { webhooksConfigSchema } from '@gw/webhooks/src/config';
import { mediaConfigSchema } from '@gw/media/src/config';
import { consoleConfigSchema } from '@gw/console/src/config';
import { ROOT, type Yaml } from './manifests';

/** Reads docs/operations.md: its environment tables (to compare with the config schemas) and its commands. */

export const OPERATIONS_DOC = path.join(ROOT, 'docs/operations.md');

interface FieldSchema {
  safeParse(input: unknown): { success: boolean; data?: unknown };
}
export interface EnvSchema {
  shape: Record<string, FieldSchema>;
}

/** Each service's config schema, by folder name under services/. */
export const SERVICE_SCHEMAS: Record<string, EnvSchema> = {
  edge: edgeConfigSchema as unknown as EnvSchema,
  inference: inferenceConfigSchema as unknown as EnvSchema,
  keys: keysConfigSchema as unknown as EnvSchema,
  billing: billingConfigSchema as unknown as EnvSchema,
  batch: batchConfigSchema as unknown as EnvSchema,
  webhooks: webhooksConfigSchema as unknown as EnvSchema,
  media: mediaConfigSchema as unknown as EnvSchema,
  console: consoleConfigSchema as unknown as EnvSchema,
};

const catalog: Yaml = JSON.parse(fs.readFileSync(path.join(ROOT, 'config/catalog.json'), 'utf8'));
/** Provider credentials: the variables config/catalog.json names (api_key_env, requires_env). */
export const PROVIDER_ENV = new Set<string>(
  Object.values<Yaml>(catalog.providers).flatMap((p) => [p.api_key_env, p.requires_env]).filter(Boolean),
);

/** `### <title>` tables under `## Environment variables`: title -> variable -> its default cell. */
export function docTables(doc: string): Map<string, Map<string, string>> {
  const section = doc.split(/^## Environment variables$/m)[1]?.split(/^## /m)[0] ?? '';
  const tables = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const line of section.split('\n')) {
    const title = /^### (.+)$/.exec(line);
    if (title) tables.set(title[1].trim(), (current = new Map()));
    const row = /^\| `([A-Z0-9_]+)` \|([^|]*)\|/.exec(line);
    if (row && current) current.set(row[1], row[2].trim());
  }
  return tables;
}

/**
 * What a default cell claims, checked against the field: `value` in code (setting it changes nothing), `—` (no
 * default, optional), `required`, or words describing a computed default (there is one).
 */
function defaultProblem(field: FieldSchema, cell: string): string | null {
  const unset = field.safeParse(undefined);
  const code = /^`([^`]*)`$/.exec(cell);
  if (code) {
    const given = field.safeParse(code[1]);
    if (!unset.success || !given.success || !isDeepStrictEqual(given.data, unset.data)) return `the default is not ${cell}`;
    return null;
  }
  if (cell === '—') return unset.success && unset.data === undefined ? null : 'it is documented without a default, but it has one (or is required)';
  if (cell === 'required') return unset.success ? 'it is documented as required, but may be left unset' : null;
  return unset.success && unset.data !== undefined ? null : `it is documented with a default (${cell}), but has none`;
}

/** Where the tables and a service's config schema disagree, as sentences. */
export function envProblems(service: string, tables: Map<string, Map<string, string>>): string[] {
  const schema = SERVICE_SCHEMAS[service];
  const own = tables.get(service) ?? new Map<string, string>();
  const shared = tables.get('Every service') ?? new Map<string, string>();
  const problems: string[] = [];
  for (const name of own.keys()) {
    if (!(name in schema.shape)) problems.push(`docs/operations.md lists ${name} for ${service}, which its config schema does not read`);
    if (shared.has(name)) problems.push(`docs/operations.md lists ${name} both for ${service} and under "Every service"`);
  }
  for (const [name, field] of Object.entries(schema.shape)) {
    const cell = own.get(name) ?? shared.get(name);
    if (cell === undefined) {
      problems.push(`${service} reads ${name}, which docs/operations.md does not list (add it to the "### ${service}" table)`);
      continue;
    }
    const problem = defaultProblem(field, cell);
    if (problem) problems.push(`docs/operations.md, ${service} ${name}: ${problem}`);
  }
  return problems;
}

/** The fenced code block whose first line starts with `start` (or that contains a line starting with it). */
export function fencedBlock(doc: string, start: string): string {
  const blocks = [...doc.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  const found = blocks.find((b) => b.split('\n').some((line) => line.startsWith(start)));
  if (!found) throw new Error(`docs/operations.md has no code block with a line starting ${JSON.stringify(start)}`);
  return found;
}
