import { InputError } from './errors';

/**
 * How deep and how large the JSON of one request may be, checked at the door before anything is routed,
 * serialized or stored: a body nested thousands of levels deep would otherwise fail later (on serialization
 * for the upstream or the job store) as a server or provider error.
 */
export const JSON_BOUNDS = {
  /** Nesting levels below a top-level field (`{"extra_body":{"a":{"b":1}}}` is 2); real payloads, tool schemas included, stay far below. */
  maxDepth: 32,
  /** Keys plus array items over the whole of one free-form object (extra_body, metadata, a JSON schema, ...). */
  maxMembers: 4096,
} as const;

const isContainer = (v: unknown): v is Record<string, unknown> | unknown[] => typeof v === 'object' && v !== null;

/** JSON.parse reads a literal such as 1e400 as Infinity, which would go on (and be stored) as null. */
function checkNumber(value: unknown, param: string): void {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new InputError(`${param} holds a number too large for JSON (such as 1e400)`, param, 'invalid_request');
}

/**
 * Walks `value` without recursion (so no depth can overflow the stack); 400 naming `param` when out of bounds
 * or when it holds a number JSON cannot carry.
 */
function walk(value: unknown, param: string, maxMembers: number): void {
  if (!isContainer(value)) return;
  const stack: Array<[unknown, number]> = [[value, 1]];
  let members = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > JSON_BOUNDS.maxDepth) throw new InputError(`${param} is nested more than ${JSON_BOUNDS.maxDepth} levels deep`, param, 'invalid_request');
    const children = Array.isArray(node) ? node : Object.values(node as Record<string, unknown>);
    members += children.length;
    if (members > maxMembers) throw new InputError(`${param} has more than ${maxMembers} keys and items`, param, 'invalid_request');
    for (const child of children) {
      if (isContainer(child)) stack.push([child, depth + 1]);
      else checkNumber(child, param);
    }
  }
}

/** Every top-level field of a body within the depth bound, named (after `prefix`, e.g. `body.`) when it is not. */
export function checkBodyDepth(body: Record<string, unknown>, prefix = ''): void {
  for (const [field, value] of Object.entries(body)) {
    checkNumber(value, prefix + field);
    walk(value, prefix + field, Number.POSITIVE_INFINITY);
  }
}

/** A free-form object (one the gateway does not interpret) within both bounds. */
export function checkFreeForm(value: unknown, param: string): void {
  walk(value, param, JSON_BOUNDS.maxMembers);
}
