import type { Catalog, CatalogModel } from '@gw/catalog';
import { CHAT_REQUEST_FIELDS, honouredParameters, type ChatCapabilities } from '@gw/provider-spec';
import { chatCapabilities } from '@gw/providers';

/** Spec: Model. Built once from the catalogue; routing data (deployments, prices) never leaks into it. */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  architecture: { input_modalities: string[]; output_modalities: string[]; tokenizer: string | null };
  canonical_slug: string;
  context_length: number | null;
  default_parameters: Record<string, unknown>;
  description: string;
  expiration_date: string | null;
  model_hub_id: string | null;
  knowledge_cutoff: string | null;
  links: { details: string };
  name: string;
  per_request_limits: { completion_tokens: number | null; prompt_tokens: number | null };
  supported_parameters: string[];
  /** `max_items` appears only for array parameters that have an item limit (such as `stop`). */
  parameter_schema: Record<string, { type: string; options: unknown[] | null; default: unknown; min: number | null; max: number | null; max_items?: number }>;
  supported_voices: string[] | null;
}

/**
 * The request parameters some route of the model honours (routing sends a request only to a route that
 * honours all it sets), from the providers' own declarations; `model` and `messages` are not parameters.
 */
export function supportedParameters(capabilities: ChatCapabilities[]): string[] {
  const honoured = new Set(capabilities.flatMap(honouredParameters));
  return CHAT_REQUEST_FIELDS.filter((f) => f !== 'model' && f !== 'messages' && honoured.has(f));
}

export function toModelObject(m: CatalogModel, routeCapabilities: ChatCapabilities[]): ModelObject {
  // A media model's accepted fields are its parameter schema (the media service validates against it).
  const supported = m.media ? Object.keys(m.parameter_schema) : supportedParameters(routeCapabilities);
  const parameterSchema = Object.fromEntries(
    Object.entries(m.parameter_schema).map(([name, p]) => [name, {
      type: p.type, options: p.options, default: p.default ?? null, min: p.min, max: p.max,
      ...(p.max_items != null ? { max_items: p.max_items } : {}),
    }]),
  );
  return {
    id: m.id,
    object: 'model',
    created: Math.floor(Date.parse(m.updated_at) / 1000),
    owned_by: m.owned_by,
    architecture: m.architecture,
    canonical_slug: m.id,
    context_length: m.context_length,
    default_parameters: m.default_parameters,
    description: m.description,
    expiration_date: m.expiration_date,
    model_hub_id: m.model_hub_id,
    knowledge_cutoff: m.knowledge_cutoff,
    links: { details: `/v1/models/${m.id}` },
    name: m.name,
    per_request_limits: { completion_tokens: m.per_request_limits.completion_tokens, prompt_tokens: m.per_request_limits.prompt_tokens },
    supported_parameters: supported,
    parameter_schema: parameterSchema,
    supported_voices: m.supported_voices,
  };
}

/** The catalogue as the model endpoints serve it, pre-serialized since it only changes with configuration. */
export class ModelDirectory {
  private readonly byId: Map<string, { model: CatalogModel; object: ModelObject }>;
  readonly listJson: string;

  constructor(catalog: Catalog, capabilitiesOf: (kind: string) => ChatCapabilities = chatCapabilities) {
    const routeCapabilities = (m: CatalogModel) => (m.media ? [] : m.deployments.map((d) => capabilitiesOf(catalog.providers[d.provider]!.kind)));
    this.byId = new Map(catalog.models.map((m) => [m.id, { model: m, object: toModelObject(m, routeCapabilities(m)) }]));
    this.listJson = JSON.stringify({ object: 'list', data: [...this.byId.values()].map((e) => e.object) });
  }

  get(id: string) {
    return this.byId.get(id);
  }
}
