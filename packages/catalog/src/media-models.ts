import type { Catalog, CatalogModel } from './schema';

/**
 * A model served by the media service rather than chat: one that makes videos, or images without text. Its
 * deployments may be on wire formats that have no chat adapter (video task APIs), and its request parameters
 * are those of its `parameter_schema`. (A model answering in text and audio, or text and images, is a chat model.)
 */
export function isMediaModel(model: CatalogModel): boolean {
  const out = model.architecture.output_modalities;
  return out.includes('video') || (out.includes('image') && !out.includes('text'));
}

/** The catalogue without its media models: what chat routing serves. */
export function chatCatalog(catalog: Catalog): Catalog {
  return { providers: catalog.providers, models: catalog.models.filter((m) => !isMediaModel(m)) };
}
