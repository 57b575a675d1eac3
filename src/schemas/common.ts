import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ROLES } from '../auth/roles.js';
// Validation messages in our words for every schema (a module with that one effect).
import './messages.js';

// Lets every schema carry OpenAPI metadata (`.openapi('Name')` makes it a named component).
extendZodWithOpenApi(z);

export { z };

/** RFC 9457 problem document, the body of every 4xx and 5xx. */
export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: 'https://bims.dev/problems/validation' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().optional(),
    errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    exceptionId: z.string().optional(),
  })
  .openapi('Problem');

/** Query values arrive as strings; these coerce them with clear messages. */
const queryInt = (min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be an integer' : undefined) })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    // Coercion's input side reads as "anything" (null included); what the query takes is an integer in range.
    .openapi({ type: 'integer', minimum: min, maximum: max });

export const queryBool = z
  .enum(['true', 'false'], { message: "must be 'true' or 'false'" })
  .transform((v) => v === 'true');

/**
 * The dates the API accepts: the years 1970 to 9999 as written, whatever the offset (so from
 * 1969-12-31T10:00:00Z, `1970-01-01T00:00:00+14:00`, to 10000-01-01T13:59:59.999Z, `9999-12-31T23:59:59.999-14:00`).
 * PostgreSQL stores years from 4713 BC, but JavaScript dates, JSON (ISO 8601 with four-digit years) and the
 * drivers do not agree outside four-digit years (year 0 does not exist in PostgreSQL, years 1-99 come back as
 * 19xx), and the API's own answers start at 1970. The bound is on the year as written so that the document can
 * state it exactly, as a `pattern`: every string of the pattern and the date-time format is accepted, in query
 * filters and bodies alike (an answer clamps what it shows into 1970-01-01Z to 9999-12-31Z). The pattern is
 * the whole of what is read, not only the year: RFC 3339, which the format names, also allows a lower-case
 * `t` and `z` and a leap second (`23:59:60`), which JavaScript's dates and PostgreSQL's timestamps do not
 * read; the pattern leaves them out, so the document admits nothing the server refuses.
 */
const DATE_RANGE = {
  min: new Date('1970-01-01T00:00:00.000Z'),
  max: new Date('9999-12-31T23:59:59.999Z'),
} as const;
const DATE_TIME_PATTERN =
  '^(?:19[7-9][0-9]|[2-9][0-9]{3})-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-5][0-9](?:\\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})$';
const outOfRange = 'must be a date-time of the years 1970 to 9999 (as written, whatever its offset)';

/** An ISO 8601 date-time with an offset, of the years 1970 to 9999 as written; stays a string. */
export const isoDateTime = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
  // Not a date at all is the format check's to report (zod runs both), so this one passes it.
  .refine((v) => Number.isNaN(Date.parse(v)) || new RegExp(DATE_TIME_PATTERN).test(v), outOfRange)
  .openapi({
    format: 'date-time',
    pattern: DATE_TIME_PATTERN,
    description:
      'RFC 3339 date-time with upper-case T and Z or an offset, seconds 00-59, years 1970 to 9999 as written',
  });

/**
 * The instant of an accepted date-time, clamped into {@link DATE_RANGE}: a year 9999 written with a negative
 * offset is in year 10000, which the drivers cannot write back (PGlite sends `+010000-...`, which PostgreSQL
 * refuses), and nothing stored or shown lies outside the range.
 */
export const clampedInstant = (v: string): Date =>
  new Date(Math.min(Math.max(Date.parse(v), DATE_RANGE.min.getTime()), DATE_RANGE.max.getTime()));

/** An ISO 8601 timestamp in a query string, as a Date ({@link clampedInstant}). */
export const queryDate = isoDateTime.transform(clampedInstant);

/**
 * A list given as `ids=1,2,3` or as repeated `ids=1&ids=2`; the query reader hands repeated keys over as
 * arrays, so both forms end up as one flat list.
 */
export function queryList<T extends z.ZodType>(item: T, max = 1000) {
  return z
    .union([z.string(), z.array(z.string())])
    .transform((v) =>
      (Array.isArray(v) ? v : [v])
        .flatMap((s) => s.split(','))
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(
      // Items validate from strings (coercing where they say so); the cast tells the types the same.
      z
        .array(item)
        .min(1, 'must name at least one value')
        .max(max, `must name at most ${max} values`) as unknown as z.ZodType<z.output<T>[], string[]>,
    );
}

/**
 * Paging and sorting shared by every list operation: `page` from 0, `size` 1..1000 (default 20),
 * `sort` as `field,asc|desc` restricted to the fields the list allows.
 */
export function pagingQuery<const F extends readonly [string, ...string[]]>(sortFields: F) {
  return {
    page: queryInt(0).default(0).openapi({ default: 0 }),
    size: queryInt(1, 1000).default(20).openapi({ default: 20 }),
    sort: z
      .string()
      .regex(
        new RegExp(`^(${sortFields.join('|')})(,(asc|desc))?$`),
        `must be field[,asc|desc] with field one of: ${sortFields.join(', ')}`,
      )
      .transform((v) => {
        const [field, direction] = v.split(',');
        return { field: field as F[number], direction: (direction ?? 'asc') as 'asc' | 'desc' };
      })
      .optional(),
  };
}

/** Row identifiers are PostgreSQL `integer`s: anything outside 1..2^31-1 cannot name a row. */
export const MAX_DB_ID = 2_147_483_647;
/** A row identifier in a JSON body. */
export const dbId = z
  .number()
  .int('must be an integer')
  .min(1, 'must be at least 1')
  .max(MAX_DB_ID, `must be at most ${MAX_DB_ID}`);
/** A row identifier in a query string or path. */
export const queryId = queryInt(1, MAX_DB_ID);

export const CountSchema = z.object({ count: z.number().int() }).openapi('Count');
export const IdsBodySchema = z.strictObject({ ids: z.array(dbId).min(1).max(1000) });

export const Role = z.enum(ROLES);
export const binary = z.string().openapi({ format: 'binary' });
