/** Small builders for OpenAPI 3.1 (JSON Schema 2020-12) fragments, so the document reads like the spec's tables. */
export type Schema = Record<string, unknown>;

const described = (s: Schema, description?: string): Schema => (description ? { ...s, description } : s);

export const str = (description?: string, extra: Schema = {}): Schema => described({ type: 'string', ...extra }, description);
export const int = (description?: string, extra: Schema = {}): Schema => described({ type: 'integer', ...extra }, description);
export const num = (description?: string, extra: Schema = {}): Schema => described({ type: 'number', ...extra }, description);
export const bool = (description?: string): Schema => described({ type: 'boolean' }, description);
export const oneOf = (values: string[], description?: string): Schema => described({ type: 'string', enum: values }, description);
export const arr = (items: Schema, description?: string): Schema => described({ type: 'array', items }, description);
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
/** Any JSON object (provider-native or free-form). */
export const anyObject = (description?: string): Schema => described({ type: 'object', additionalProperties: true }, description);
/** OpenAI's metadata: at most 16 pairs, keys of 1 to 64 characters, string values of at most 512. */
export const keyValueMetadata = (): Schema => ({
  type: 'object', maxProperties: 16, propertyNames: { minLength: 1, maxLength: 64 }, additionalProperties: { type: 'string', maxLength: 512 },
});
/** The value or null. */
export const orNull = (s: Schema): Schema => ('$ref' in s ? { oneOf: [s, { type: 'null' }] } : { ...s, type: [s.type, 'null'] });

export function obj(properties: Record<string, Schema>, required: string[] = [], description?: string, extra: Schema = {}): Schema {
  return described({ type: 'object', properties, ...(required.length ? { required } : {}), ...extra }, description);
}

/** OpenAI-style list envelope with cursors (API-NOTES). */
export const cursorList = (item: string): Schema => obj({
  object: oneOf(['list']), data: arr(ref(item)), first_id: orNull(str()), last_id: orNull(str()), has_more: bool(),
}, ['object', 'data']);

/** The key endpoints' `{"data": ...}` wrapper (and billing's). */
export const dataOf = (inner: Schema): Schema => obj({ data: inner }, ['data']);
