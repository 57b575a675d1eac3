/**
 * Decoding of column values, once, in the repositories: services receive values as `db/tables.ts` types them.
 *
 * jsonb columns: both drivers parse json and jsonb results, but a value that reached us as text (a driver or a
 * PGlite parser table told otherwise, a `::text` cast, a row read back from a JSON aggregate) is parsed here.
 * Only for columns whose values are never a bare JSON string: a stored `"PASSIVE"` arrives as the string
 * `PASSIVE`, which this would try to parse again (settings values are taken as the driver gives them).
 */
export function parsedJson<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

/** A timestamp column as a Date, whether the driver gave a Date or text (JSON aggregates give text). */
export function asDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}
