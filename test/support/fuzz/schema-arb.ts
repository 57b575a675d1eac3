import fc from 'fast-check';
import { z } from 'zod';

/**
 * Plausible values from an operation's zod schema, through its JSON Schema (`z.toJSONSchema`, input side):
 * the shape a client would send, with strings drawn partly from hostile metacharacters, so that most
 * requests get past the shape checks and into the handlers. The mutations (mutations.ts) then break them.
 */

export type JsonSchema = Record<string, any>;

export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/**
 * Strings that have broken services before: SQL and LIKE metacharacters, path traversal (plain, encoded,
 * overlong), NUL in its encodings, format strings, unicode that changes length under normalisation or
 * case mapping, bidi overrides, lone surrogates and oversized code points. None contains the markers the
 * leak oracle looks for (internal paths, stack frames), since answers may echo them back.
 */
export const METACHARS = [
  "' OR 1=1--",
  "'; DROP TABLE subjects; --",
  '" OR ""="',
  '%',
  '_',
  '\\',
  "\\'",
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%c0%af..%c0%af',
  '%00',
  'a\u0000b',
  '%s%s%s%n',
  '${7*7}{{7*7}}',
  '<script>alert(1)</script>',
  '\u202eevil\u202c',
  'ﬀ\u0130ß',
  '\ud800',
  '\udfff\ud800',
  '😀'.repeat(40),
  '\u0085\u2028\u2029',
  ' ',
  '',
  'null',
  '-1',
  '1e309',
  '__proto__',
  'constructor',
];

export const metachar = fc.constantFrom(...METACHARS);

/** Field-name hints: where a name means a specific kind of value, draw from these instead. */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

const DATE_MIN = new Date('1990-01-01T00:00:00Z');
const DATE_MAX = new Date('2040-01-01T00:00:00Z');

/**
 * One alternative of an anyOf / oneOf as a whole schema. An alternative that only names required keys (how a
 * document states "at least one of" / "exactly one of" on an object) is the object itself with those keys
 * required; under oneOf, the keys the other alternatives require are left out, so exactly one is present.
 */
function branchOf(schema: JsonSchema, alt: JsonSchema): JsonSchema {
  if (
    alt.type !== undefined ||
    alt.properties !== undefined ||
    alt.$ref !== undefined ||
    schema.properties === undefined
  )
    return alt;
  const { anyOf: _any, oneOf, ...parent } = schema;
  const mine = (alt.required ?? []) as string[];
  const others = oneOf
    ? (oneOf as JsonSchema[]).flatMap((o) => ((o.required ?? []) as string[]).filter((k) => !mine.includes(k)))
    : [];
  const properties = Object.fromEntries(
    Object.entries(parent.properties as Record<string, JsonSchema>).filter(([k]) => !others.includes(k)),
  );
  return { ...parent, ...alt, properties, required: [...new Set([...((parent.required ?? []) as string[]), ...mine])] };
}

/** Where an object keeps its `if`/`then`/`else` rules (contract.ts's resolved() gathers them from allOf). */
export const CONDITIONS = 'x-conditions';

/**
 * Whether a value meets the part of JSON Schema the documents' object rules use: `properties` with `const` or
 * `enum`, `required` and `not`. Anything else is taken as met.
 */
function meets(schema: JsonSchema | undefined, value: unknown): boolean {
  if (!schema) return true;
  if (schema.not !== undefined && meets(schema.not, value)) return false;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return true;
  const object = value as Record<string, unknown>;
  if (((schema.required ?? []) as string[]).some((key) => !Object.hasOwn(object, key))) return false;
  for (const [key, sub] of Object.entries<JsonSchema>(schema.properties ?? {})) {
    if (!Object.hasOwn(object, key)) continue;
    if (sub.const !== undefined && object[key] !== sub.const) return false;
    if (sub.enum && !(sub.enum as unknown[]).includes(object[key])) return false;
  }
  return true;
}

/** An `if`/`then`/`else` rule on one object value. */
const conditionHolds = (rule: JsonSchema, value: unknown) =>
  meets(rule.if, value) ? meets(rule.then, value) : meets(rule.else, value);

/** A plausible value for a JSON Schema node. `name` is the property it sits under, for hints. */
export function validish(schema: JsonSchema, hints: Hints, name?: string, depth = 0): fc.Arbitrary<unknown> {
  if (name !== undefined && hints[name]) return hints[name]!;
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts) {
    // The object's own rules hold in every branch.
    const rules = schema[CONDITIONS] ? { [CONDITIONS]: schema[CONDITIONS] } : {};
    return fc.oneof(
      ...(alts as JsonSchema[]).map((s) => validish({ ...branchOf(schema, s), ...rules }, hints, name, depth)),
    );
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const keys = Object.keys(props);
      if (keys.length === 0) {
        if (schema.additionalProperties === false) return fc.constant({});
        return fc.dictionary(
          fc.oneof(fc.string({ maxLength: 8 }), metachar),
          depth > 2 ? fc.constant(1) : fc.jsonValue({ maxDepth: 2 }),
          { maxKeys: 3 },
        );
      }
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const key of keys) model[key] = validish(props[key]!, hints, key, depth + 1);
      const record = fc.record(model, { requiredKeys: (schema.required ?? []) as string[] });
      const conditions = (schema[CONDITIONS] ?? []) as JsonSchema[];
      return conditions.length ? record.filter((v) => conditions.every((c) => conditionHolds(c, v))) : record;
    }
    case 'array': {
      const min = schema.minItems ?? 0;
      const constraints = { minLength: min, maxLength: Math.max(min, Math.min(schema.maxItems ?? 3, 3)) };
      const items = validish(schema.items ?? {}, hints, name, depth + 1);
      // uniqueItems: no two items alike (as JSON, which is how the document compares them).
      return schema.uniqueItems
        ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
        : fc.array(items, constraints);
    }
    case 'string':
      return stringArb(schema);
    case 'integer': {
      const min = Math.max(
        schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1e6),
        -1e9,
      );
      const max = Math.min(schema.maximum ?? 1e6, 1e9);
      return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
    }
    case 'number': {
      const min = schema.minimum ?? -1e6;
      const max = schema.maximum ?? 1e6;
      return fc.oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(min, max));
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return depth > 2 ? fc.constant('x') : fc.jsonValue({ maxDepth: 2 });
  }
}

function stringArb(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 24, 24));
  if (schema.format === 'date-time')
    return fc.date({ min: DATE_MIN, max: DATE_MAX, noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'uuid') return fc.uuid();
  let plain: fc.Arbitrary<string> = fc.string({ minLength, maxLength, unit: 'grapheme' });
  let pattern: RegExp | undefined;
  if (schema.pattern) {
    try {
      pattern = new RegExp(schema.pattern);
      plain = fc
        .stringMatching(pattern)
        .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity));
    } catch {
      // A pattern fast-check cannot generate from: plain strings (mostly rejected, which is fine too).
    }
  }
  // The hostile strings that are still valid here (JSON Schema counts lengths in code points): values the
  // schema admits, so that a refusal of one is the server's, not the generator's.
  const fits = (s: string) =>
    [...s].length >= minLength && [...s].length <= (schema.maxLength ?? Infinity) && (!pattern || pattern.test(s));
  const hostile = METACHARS.filter(fits);
  return hostile.length
    ? fc.oneof({ weight: 3, arbitrary: plain }, { weight: 1, arbitrary: fc.constantFrom(...hostile) })
    : plain;
}

/** The JSON types a schema node accepts, or null when it accepts anything. */
export function typesOf(schema: JsonSchema): Set<string> | null {
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts) {
    const out = new Set<string>();
    for (const alt of alts as JsonSchema[]) {
      const t = typesOf(alt);
      if (t === null) return null;
      for (const x of t) out.add(x);
    }
    return out;
  }
  if (schema.const !== undefined) return new Set([jsonType(schema.const)]);
  if (schema.enum) return new Set((schema.enum as unknown[]).map(jsonType));
  if (!schema.type) return null;
  const types = new Set<string>(Array.isArray(schema.type) ? schema.type : [schema.type]);
  if (types.has('integer')) types.add('number');
  return types;
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' ? 'number' : typeof value;
}

/** One node of a generated value with the schema that governs it. */
export interface Node {
  path: (string | number)[];
  schema: JsonSchema;
  /** True when a union (anyOf/oneOf) lies on the way: another branch might accept what this one refuses. */
  inUnion: boolean;
}

/** Every node of a value, paired with its schema (for unions, the first branch whose type fits). */
export function nodesOf(
  value: unknown,
  schema: JsonSchema,
  path: (string | number)[] = [],
  inUnion = false,
  out: Node[] = [],
): Node[] {
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts) {
    const fit = (alts as JsonSchema[]).find((s) => typesOf(s)?.has(jsonType(value))) ?? {};
    return nodesOf(value, fit, path, true, out);
  }
  out.push({ path, schema, inUnion });
  if (Array.isArray(value)) value.forEach((item, i) => nodesOf(item, schema.items ?? {}, [...path, i], inUnion, out));
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const child =
        schema.properties?.[key] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : {});
      nodesOf(item, child, [...path, key], inUnion, out);
    }
  }
  return out;
}

/** A copy of `value` with the node at `path` replaced (or removed when `replacement` is `REMOVE`). */
export const REMOVE = Symbol('remove');
export function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  const next = replaceAt(copy[head!], rest, replacement);
  if (next === REMOVE) {
    if (Array.isArray(copy)) copy.splice(head as number, 1);
    else delete copy[head!];
  } else copy[head!] = next;
  return copy;
}
