import type { ZodType } from 'zod';
import { queryObject, validate } from './validation.js';

/**
 * The validated path and query of the hottest reads, kept by their text: clients repeat them (`page=0&size=20`,
 * the same subject again), and validating them again was the URL's parse and the schema's, about a twentieth of a
 * page and of a subject read. Only for operations whose entry says `read.keepsInput` (their schemas are pure: the
 * same text always validates to the same result, with nothing of the request or the time in it); a kept result
 * is frozen and only read. A refused input is never kept: it is validated (and refused with its 400) every time.
 */

/** At most this many kept per schema; all forgotten at once when full, so no client can make it grow. */
const LIMIT = 256;
/** Kept results per schema (an operation's schema may differ by surface), by the input's text. */
const kept = new WeakMap<ZodType, Map<string, unknown>>();

function keptOrValidated(schema: ZodType, text: string, validated: () => unknown): unknown {
  let known = kept.get(schema);
  if (!known) kept.set(schema, (known = new Map()));
  let result = known.get(text);
  if (result === undefined) {
    result = Object.freeze(validated());
    if (known.size >= LIMIT) known.clear();
    known.set(text, result);
  }
  return result;
}

/** The request's query, validated by `schema` (a 400 naming the field when it is bad). */
export function validQuery(schema: ZodType, url: string, keep: boolean): unknown {
  const validated = () => validate(schema, queryObject(new URL(url)), 'query');
  if (!keep) return validated();
  const at = url.indexOf('?');
  return keptOrValidated(schema, at === -1 ? '' : url.slice(at), validated);
}

/** The request's path parameters, validated by `schema` (a 400 naming the field when it is bad). */
export function validParams(schema: ZodType, params: Record<string, string>, keep: boolean): unknown {
  const validated = () => validate(schema, params, 'path');
  if (!keep) return validated();
  // One parameter (an id, a subjectId, a UUID): its value is the text; anything else is validated afresh.
  const names = Object.keys(params);
  if (names.length !== 1) return validated();
  return keptOrValidated(schema, `${names[0]}=${params[names[0]!]}`, validated);
}
