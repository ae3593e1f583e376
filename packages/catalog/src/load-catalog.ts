import { readFileSync } from 'node:fs';
import { catalogSchema, type Catalog } from './schema';

/**
 * Reads and validates the catalogue file, then keeps only what can be served here: a provider whose
 * `requires_env` variable is unset is dropped, and so are its deployments and any model left without one.
 * Cross references are checked so a typo fails at startup, not on the first call.
 */
export function loadCatalog(file: string, env: NodeJS.ProcessEnv = process.env): Catalog {
  return selectAvailable(readCatalog(file), env);
}

/**
 * The whole validated catalogue, whatever this process's environment holds: billing prices every
 * deployment, including those only another process (with the provider's key) can serve.
 */
export function readCatalog(file: string): Catalog {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read catalogue ${file}: ${(err as Error).message}`);
  }
  const parsed = catalogSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(`Invalid catalogue ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  checkReferences(parsed.data);
  return parsed.data;
}

function checkReferences(catalog: Catalog): void {
  const seenDeployments = new Set<string>();
  const seenModels = new Set<string>();
  for (const model of catalog.models) {
    if (seenModels.has(model.id)) throw new Error(`Duplicate model id in catalogue: ${model.id}`);
    seenModels.add(model.id);
    for (const d of model.deployments) {
      if (!(d.provider in catalog.providers)) throw new Error(`Deployment ${d.id} names unknown provider ${d.provider}`);
      if (seenDeployments.has(d.id)) throw new Error(`Duplicate deployment id in catalogue: ${d.id}`);
      // A native batch line must never be billed at a price nobody set.
      if (d.native_batch === true && !d.batch_price) throw new Error(`Deployment ${d.id} has native_batch but no batch_price`);
      seenDeployments.add(d.id);
    }
  }
}

export function selectAvailable(catalog: Catalog, env: NodeJS.ProcessEnv): Catalog {
  const providers = Object.fromEntries(
    Object.entries(catalog.providers).filter(([, p]) => !p.requires_env || Boolean(env[p.requires_env])),
  );
  const models = catalog.models
    .map((m) => ({ ...m, deployments: m.deployments.filter((d) => d.provider in providers) }))
    .filter((m) => m.deployments.length > 0);
  return { providers, models };
}

/** Every deployment by id, across models: the price book billing reads. */
export function deploymentsById(catalog: Catalog) {
  return new Map(catalog.models.flatMap((m) => m.deployments.map((d) => [d.id, { ...d, model: m.id }] as const)));
}

/** The catalogue without its media models: what chat routing serves (media models are the media service's). */
export function chatCatalog(catalog: Catalog): Catalog {
  return { ...catalog, models: catalog.models.filter((m) => !m.media) };
}
