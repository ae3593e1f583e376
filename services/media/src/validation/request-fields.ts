import { parameterBoundViolation, type CatalogModel } from '@gw/catalog';
import { checkFreeForm, InputError, unknownParameterError } from '@gw/platform';

/**
 * The JSON type of a request field, as the spec's tables and the models' `parameter_schema` name them; `data` is
 * a string carrying inline content (base64, a data URL), whose size the reader of that content bounds; `id` a
 * string naming a caller's user or request.
 */
export type FieldType = 'string' | 'data' | 'id' | 'integer' | 'number' | 'boolean' | 'array' | 'object';

/**
 * The longest free-text field (a prompt, an instruction) a model takes when its `parameter_schema` gives no `max`:
 * the longest prompt the media APIs we serve document (OpenAI's gpt-image-1 and Sora).
 */
export const MAX_TEXT_FIELD_CHARS = 32_000;
/** The longest caller identifier (`user`, `request_id`, a video's `request_id` too), as chat's `user`. */
export const MAX_ID_FIELD_CHARS = 256;

/** Whether `value` is of the JSON type a field table or a model's `parameter_schema` names. */
export function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'string': case 'data': case 'id': return typeof value === 'string';
    case 'integer': return typeof value === 'number' && Number.isSafeInteger(value);
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'boolean': return typeof value === 'boolean';
    case 'array': return Array.isArray(value);
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
    default: return false;
  }
}

/**
 * The type a field table gives `name`, or undefined for a name it does not hold. Its own entries only: a body
 * field named `constructor` or `__proto__` is no field, not a member every object has.
 */
export function fieldTypeOf(table: Readonly<Record<string, FieldType>>, name: string): FieldType | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/**
 * Checks a request's fields against the endpoint's field table (spec types) and then the model's
 * `parameter_schema` (type, options, min, max, max_items). Every failure is a 400 naming the field: a field
 * the endpoint does not have, a field the model does not accept, a value out of its bounds. The `always`
 * fields every model takes need no schema entry, but are held to one the model gives; free text the model
 * gives no `max` is held to MAX_TEXT_FIELD_CHARS, an identifier to MAX_ID_FIELD_CHARS, an object or array to the
 * JSON bounds (it is serialized for the provider).
 */
export function checkFields(fields: Record<string, unknown>, table: Readonly<Record<string, FieldType>>, model: CatalogModel, always: readonly string[]): void {
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const type = fieldTypeOf(table, name);
    if (!type) throw unknownParameterError(name);
    const jsonType = type === 'data' || type === 'id' ? 'string' : type;
    if (!typeMatches(type, value)) throw new InputError(`${name} must be ${article(jsonType)} ${jsonType}`, name, 'invalid_type');
    if (type === 'object' || type === 'array') checkFreeForm(value, name);
    const spec = Object.hasOwn(model.parameter_schema, name) ? model.parameter_schema[name] : undefined;
    if (!spec && !always.includes(name)) throw new InputError(`${name} is not supported by model '${model.id}'`, name, 'unsupported_parameter');
    if (spec) {
      if (!typeMatches(spec.type, value)) throw new InputError(`${name} must be ${article(spec.type)} ${spec.type} for model '${model.id}'`, name, 'invalid_type');
      const violation = parameterBoundViolation(name, value, spec);
      if (violation) throw new InputError(`${violation} for model '${model.id}'`, name, 'invalid_value');
    }
    const defaultMax = type === 'string' ? MAX_TEXT_FIELD_CHARS : type === 'id' ? MAX_ID_FIELD_CHARS : null;
    if (defaultMax !== null && (spec?.max ?? null) === null && (value as string).length > defaultMax) {
      throw new InputError(`${name} may have at most ${defaultMax} characters`, name, 'invalid_value');
    }
  }
}

/**
 * The routes that honour every field the request sets (the gateway's own fields aside); none is a 400 naming
 * the first field no route honours, so nothing a provider cannot do is ever dropped silently.
 */
export function routesHonouring<R>(routes: R[], set: string[], honours: (route: R) => readonly string[]): R[] {
  const serving = routes.filter((r) => set.every((f) => honours(r).includes(f)));
  if (serving.length > 0) return serving;
  const missing = set.find((f) => !routes.some((r) => honours(r).includes(f))) ?? set[0];
  throw new InputError(`${missing} cannot be honoured by any provider serving this model`, missing ?? null, 'unsupported_parameter');
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? 'an' : 'a';
}
