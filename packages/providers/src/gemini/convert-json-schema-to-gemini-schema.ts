import { InputError, setOwnEntry } from '@gw/platform';

type JsonSchema = Record<string, unknown>;

/** Keywords Gemini's OpenAPI-subset Schema shares with JSON Schema, copied as they are. */
const COPIED = [
  'title',
  'description',
  'enum',
  'required',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'nullable',
  'propertyOrdering',
] as const;

/** Gemini rejects any other `format` for these types (e.g. `uri` on a string). */
const FORMATS: Record<string, Set<string>> = {
  string: new Set(['enum', 'date-time']),
  number: new Set(['float', 'double']),
  integer: new Set(['int32', 'int64']),
};

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * JSON Schema (as tools and response_format carry it) to Gemini's Schema: keeps what Gemini understands,
 * drops what it rejects as an unknown field (`additionalProperties`, `$schema`, `default`, ...), inlines local
 * `$ref`s, turns `null` in a type list or `anyOf` into `nullable`, and `const` into a one-value `enum`.
 * `param` names the schema in errors.
 */
export function convertJsonSchemaToGeminiSchema(schema: unknown, param: string): JsonSchema {
  if (!isObject(schema)) throw new InputError('A JSON schema must be an object', param);
  const defs = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) };
  return new SchemaConverter(defs, param).convert(schema, []);
}

/** Function parameters: an object without properties is sent as no parameters, as Gemini requires. */
export function convertToolParameters(schema: unknown, param: string): JsonSchema | undefined {
  if (schema === undefined) return undefined;
  const converted = convertJsonSchemaToGeminiSchema(schema, param);
  return converted.type === 'object' && converted.properties === undefined ? undefined : converted;
}

class SchemaConverter {
  constructor(
    private readonly defs: JsonSchema,
    private readonly param: string,
  ) {}

  convert(schema: unknown, refStack: string[]): JsonSchema {
    if (schema === true || schema === undefined) return {};
    if (!isObject(schema)) throw new InputError('Every subschema must be an object', this.param);
    if (typeof schema.$ref === 'string') return this.convert(this.resolve(schema.$ref, refStack), [...refStack, schema.$ref]);

    const out: JsonSchema = {};
    for (const key of COPIED) if (schema[key] !== undefined) out[key] = schema[key];
    if (schema.const !== undefined) out.enum = [schema.const];
    this.convertType(schema.type, out);

    if (isObject(schema.properties)) {
      const properties: JsonSchema = {};
      for (const [name, value] of Object.entries(schema.properties)) setOwnEntry(properties, name, this.convert(value, refStack));
      if (Object.keys(properties).length > 0) out.properties = properties;
    }
    if (schema.items !== undefined) out.items = this.convert(Array.isArray(schema.items) ? schema.items[0] : schema.items, refStack);

    const alternatives = [...asArray(schema.anyOf), ...asArray(schema.oneOf)];
    if (alternatives.length > 0) this.convertAlternatives(alternatives, refStack, out);
    for (const member of asArray(schema.allOf)) mergeInto(out, this.convert(member, refStack));

    if (out.type === undefined && out.properties !== undefined) out.type = 'object';
    const allowed = typeof out.type === 'string' ? FORMATS[out.type] : undefined;
    if (typeof schema.format === 'string' && allowed?.has(schema.format)) out.format = schema.format;
    return out;
  }

  private convertType(type: unknown, out: JsonSchema): void {
    if (typeof type === 'string') {
      out.type = type;
      return;
    }
    if (!Array.isArray(type)) return;
    const types = type.filter((t) => t !== 'null');
    if (types.length < type.length) out.nullable = true;
    if (types.length === 1) out.type = types[0];
    else if (types.length > 1) out.anyOf = types.map((t) => ({ type: t }));
  }

  private convertAlternatives(alternatives: unknown[], refStack: string[], out: JsonSchema): void {
    const nonNull = alternatives.filter((s) => !(isObject(s) && s.type === 'null'));
    if (nonNull.length < alternatives.length) out.nullable = true;
    if (nonNull.length === 1) mergeInto(out, this.convert(nonNull[0], refStack));
    else if (nonNull.length > 1) out.anyOf = nonNull.map((s) => this.convert(s, refStack));
  }

  private resolve(ref: string, refStack: string[]): unknown {
    if (refStack.includes(ref)) throw new InputError(`Recursive schema references (${ref}) are not supported by this provider`, this.param);
    const prefix = ['#/$defs/', '#/definitions/'].find((p) => ref.startsWith(p));
    const name = prefix === undefined ? undefined : ref.slice(prefix.length);
    const target = name !== undefined && Object.hasOwn(this.defs, name) ? this.defs[name] : undefined;
    if (target === undefined) throw new InputError(`Schema reference ${ref} cannot be resolved; only local $defs are supported`, this.param);
    return target;
  }
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** allOf members and a lone anyOf alternative add to the schema they sit in. */
function mergeInto(out: JsonSchema, member: JsonSchema): void {
  for (const [key, value] of Object.entries(member)) {
    if (key === 'properties' && isObject(out.properties) && isObject(value)) out.properties = { ...out.properties, ...value };
    else if (key === 'required' && Array.isArray(out.required) && Array.isArray(value)) out.required = [...new Set([...out.required, ...value])];
    else if (out[key] === undefined || key !== 'description') out[key] = value;
  }
}
