import * as path from 'node:path';
import * as protobuf from 'protobufjs';
import { PROTO_ROOT } from '../index';

/**
 * Drift between a hand-written schema (one that parses a proto message's JSON encoding) and the proto itself:
 * the proto is the definition, so a test asserts `schemaDrift(...)` is empty. Checked both ways and by
 * behaviour, not by reading the schema's internals: every proto field is a schema field and the reverse; each
 * field accepts its proto type's JSON values and refuses other types; an absent field keeps its presence
 * (proto3 `optional` and message fields) or reads as its zero value (every other scalar).
 */

/** What a schema must offer: its field names and a parse (zod objects have both). */
export interface ObjectSchema {
  shape: Record<string, unknown>;
  safeParse(value: unknown): { success: boolean; data?: unknown };
}

export interface DriftOptions {
  /** A valid message: each check changes one field of it. */
  base: Record<string, unknown>;
  /** Fields the schema requires although proto3 lets them be absent (domain rules, e.g. an id). */
  requiredBeyondProto?: readonly string[];
}

function loadRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.resolve(PROTO_ROOT, target);
  root.loadSync(['gateway/events/v1/events.proto', 'gateway/billing/v1/billing.proto', 'gateway/keys/v1/keys.proto'], { keepCase: true });
  root.resolveAll();
  return root;
}
let root: protobuf.Root | undefined;

/** A message type of `protos/`, e.g. `gateway.events.v1.UsageEvent`. */
export function protoMessage(fullName: string): protobuf.Type {
  root ??= loadRoot();
  return root.lookupType(fullName);
}

const INTEGER = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64', 'int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

/** JSON values of the field's proto type (proto3 JSON: 64-bit integers may also be decimal strings). */
function samples(field: protobuf.Field): { valid: unknown[]; invalid: unknown[]; zero: unknown } {
  if (field.resolvedType instanceof protobuf.Type) return { valid: [{}], invalid: [5, 'text', true], zero: null };
  if (field.type === 'string') return { valid: ['text'], invalid: [5, true, {}], zero: '' };
  if (field.type === 'bool') return { valid: [true, false], invalid: ['yes', 1, {}], zero: false };
  if (INTEGER.has(field.type)) return { valid: [7, 0, ...(field.long ? ['7'] : [])], invalid: ['seven', true, 1.5, {}], zero: 0 };
  if (field.type === 'double' || field.type === 'float') return { valid: [1.5, 2, 0], invalid: ['abc', true, {}], zero: 0 };
  throw new Error(`schemaDrift: proto type ${field.type} of ${field.name} is not covered yet`);
}

function hasPresence(field: protobuf.Field): boolean {
  return field.resolvedType instanceof protobuf.Type || (field.options as { proto3_optional?: boolean } | undefined)?.proto3_optional === true;
}

/** Every difference between the schema and the proto message, as readable lines (empty: no drift). */
export function schemaDrift(messageFullName: string, schema: ObjectSchema, opts: DriftOptions): string[] {
  const message = protoMessage(messageFullName);
  const drift: string[] = [];
  const protoFields = new Set(message.fieldsArray.map((f) => f.name));
  const required = new Set(opts.requiredBeyondProto ?? []);
  for (const name of Object.keys(schema.shape)) if (!protoFields.has(name)) drift.push(`${name}: in the schema, not in ${message.name}`);
  for (const name of required) if (!protoFields.has(name)) drift.push(`${name}: listed as required, not in ${message.name}`);
  if (!schema.safeParse(opts.base).success) return [...drift, 'the base message is refused by the schema'];
  const parse = (field: string, value: unknown) => schema.safeParse(value === undefined ? without(opts.base, field) : { ...opts.base, [field]: value });

  for (const field of message.fieldsArray) {
    if (!(field.name in schema.shape)) {
      drift.push(`${field.name}: in ${message.name}, not in the schema`);
      continue;
    }
    const s = samples(field);
    const valid = field.repeated ? [[], [s.valid[0]]] : s.valid;
    const invalid = field.repeated ? [s.valid[0], ...s.invalid] : s.invalid;
    const kind = `${field.repeated ? 'repeated ' : ''}${field.type}`;
    for (const v of valid) if (!parse(field.name, v).success) drift.push(`${field.name}: refuses ${JSON.stringify(v)}, a proto ${kind}`);
    for (const v of invalid) if (parse(field.name, v).success) drift.push(`${field.name}: accepts ${JSON.stringify(v)}, not a proto ${kind}`);

    const absent = parse(field.name, undefined);
    if (required.has(field.name)) {
      if (absent.success) drift.push(`${field.name}: listed as required, but accepted when absent`);
      continue;
    }
    if (!absent.success) {
      drift.push(`${field.name}: refused when absent (proto3 allows it)`);
      continue;
    }
    const read = (absent.data as Record<string, unknown>)[field.name];
    if (field.repeated) {
      if (read != null && !(Array.isArray(read) && read.length === 0)) drift.push(`${field.name}: absent reads as ${JSON.stringify(read)}, not empty`);
    } else if (hasPresence(field)) {
      if (read != null) drift.push(`${field.name}: absent reads as ${JSON.stringify(read)}; the proto field has presence, so absence must stay visible`);
    } else if (read !== s.zero) {
      drift.push(`${field.name}: absent reads as ${JSON.stringify(read)}, not the proto zero value ${JSON.stringify(s.zero)}`);
    }
  }
  return drift;
}

function without(obj: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...obj };
  delete copy[key];
  return copy;
}
