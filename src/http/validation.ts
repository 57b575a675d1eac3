import type { z } from 'zod';
import { DomainError, type FieldError } from '../services/errors.js';
import type { BodyPath, FieldNamer } from '../schemas/field-names.js';

/** Turn a zod failure into field errors that name where the bad value was (`body.faces.0.image`). */
function fieldErrorsOf(error: z.ZodError, name: FieldNamer): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key));
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ field: name([...path, key]), message: 'is not a known field' });
    } else {
      out.push({ field: name(path), message: issue.message });
    }
  }
  return out;
}

/**
 * Strings PostgreSQL cannot store: U+0000, and an unpaired UTF-16 surrogate (JSON's `"\ud800"` escape makes
 * one; it has no UTF-8 encoding). Either would surface as a database error (a 500) instead of a clear 400.
 */
const UNSTORABLE: [RegExp, string][] = [
  [/\u0000/, 'must not contain the NUL character'],
  [
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/,
    'must not contain an unpaired surrogate (it is not valid Unicode)',
  ],
];

const unstorable = (text: string) => UNSTORABLE.find(([re]) => re.test(text))?.[1] ?? null;

/** The first string (or key) in a request part that PostgreSQL could not store, with its field and why. */
function findUnstorable(value: unknown, name: FieldNamer, path: BodyPath = []): FieldError | null {
  if (typeof value === 'string') {
    const message = unstorable(value);
    return message ? { field: name(path), message } : null;
  }
  // Bytes (a sample read from a form part or a JSON body's base64) hold no text.
  if (path.length > 64 || value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return null;
  for (const [key, item] of Object.entries(value)) {
    const message = unstorable(key);
    if (message)
      return { field: name([...path, key.replace(/\u0000/g, '\\0').replace(/[\ud800-\udfff]/g, '\ufffd')]), message };
    const found = findUnstorable(item, name, [...path, Array.isArray(value) ? Number(key) : key]);
    if (found) return found;
  }
  return null;
}

/**
 * Validate one part of a request (`body`, `query`, `path`), raising a 400 that lists every offending field.
 * A body's fields are named by `names`, the request's own names for them (a form's parts: multipart.ts).
 */
export function validate<T extends z.ZodType>(
  schema: T,
  value: unknown,
  where: string,
  names: FieldNamer = (path) => [where, ...path].join('.'),
): z.output<T> {
  const bad = findUnstorable(value, names);
  if (bad) throw new DomainError('validation', `${bad.field} ${bad.message}`, { errors: [bad] });
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors = fieldErrorsOf(parsed.error, names);
  const summary = errors.map((e) => `${e.field} ${e.message}`).join('; ');
  throw new DomainError('validation', `Invalid ${where}: ${summary}`, { errors });
}

/**
 * Query parameters as an object; a key given more than once becomes an array. Built with
 * `Object.fromEntries`, which makes every key an own property: assigning `out['__proto__'] = ...` would
 * instead swallow the key (or, given twice, swap the object's prototype for an array), so a strict schema
 * would never see it.
 */
export function queryObject(url: URL): Record<string, string | string[]> {
  return Object.fromEntries(
    [...new Set(url.searchParams.keys())].map((key) => {
      const values = url.searchParams.getAll(key);
      return [key, values.length > 1 ? values : values[0]!];
    }),
  );
}

/** Deepest nesting of arrays and objects a JSON body may have; no request of the interface needs more than a few. */
export const MAX_JSON_DEPTH = 64;

/**
 * How deeply the JSON text nests, counted on the text without parsing (strings skipped), so that a body
 * nested a hundred thousand levels is refused before anything recursive (JSON.stringify in a schema
 * refinement, PostgreSQL's jsonb parser) walks it and runs out of stack.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) max = Math.max(max, ++depth);
    else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return max;
}
