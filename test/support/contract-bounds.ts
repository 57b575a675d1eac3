import { nodesOf, type JsonSchema } from './fuzz/schema-arb.js';
import { resolved, type DocOperation, type GeneratedRequest } from './contract.js';

/**
 * A published document rewritten so that the requests generated from it (contract.ts) carry values at the
 * limits the document states, as an outside property-based tester reaches them: every list as long as its
 * `maxItems` allows (a list the document leaves unbounded, {@link UNBOUNDED_LENGTH} items: a limit the server
 * enforces must be in the document), and every date-time drawn from the ends of its range in the forms
 * RFC 3339 allows (any offset, fractions, lower-case `t` and `z`, a leap second) that the schema's own
 * `pattern` admits. Each rewritten schema node is marked {@link BOUND}, so that a refusal naming such a field
 * can be told from one about another field.
 */

export const BOUND = 'x-contract-bound';
/** The length of a list the document gives no maxItems. */
export const UNBOUNDED_LENGTH = 64;
/** Lists longer than this are drawn at this length (importExceptionList takes 100,000 records). */
const LONGEST_DRAWN = 1000;

/**
 * RFC 3339 date-times (its `date-time` production, which JSON Schema's format names) at and near the ends of
 * 1970..9999 as written: the extreme offsets put the instant itself outside, in 1969 and in the year 10000.
 */
export const EDGE_DATE_TIMES = [
  '1970-01-01T00:00:00Z',
  '1970-01-01T00:00:00+23:59',
  '1970-01-01T00:00:00.000000001+14:00',
  '9999-12-31T23:59:59.999999999-23:59',
  '9999-12-31T23:59:59Z',
  '2000-02-29T12:00:00-00:00',
  '2038-01-19T03:14:08+05:30',
  // RFC 3339 section 5.6: "T" and "Z" may be lower case; section 5.7: a leap second's seconds are 60.
  '2000-02-29t12:00:00z',
  '2016-12-31T23:59:60Z',
];

/** A deep copy of `doc` with its lists and date-times drawn at their bounds (see above). */
export function atBounds(doc: Record<string, any>): Record<string, any> {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: JsonSchema = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, visit(v)]));
    if (out.type === 'array') {
      const length = Math.min(out.maxItems ?? UNBOUNDED_LENGTH, LONGEST_DRAWN);
      if (length >= (out.minItems ?? 0)) Object.assign(out, { minItems: length, maxItems: length, [BOUND]: true });
    }
    if (out.format === 'date-time') {
      const pattern = out.pattern ? new RegExp(out.pattern) : undefined;
      out.enum = EDGE_DATE_TIMES.filter((v) => !pattern || pattern.test(v));
      out[BOUND] = true;
    }
    return out;
  };
  return visit(structuredClone(doc)) as Record<string, any>;
}

const marked = (schema: JsonSchema) => JSON.stringify(schema).includes(BOUND);

/** Whether any parameter or body of the operation (in a document from {@link atBounds}) carries a bound. */
export function hasBounds(op: DocOperation, doc: Record<string, any>): boolean {
  const params = (op.operation.parameters ?? []) as { schema?: JsonSchema }[];
  const bodies = Object.values<{ schema?: JsonSchema }>(op.operation.requestBody?.content ?? {});
  return [...params.map((p) => p.schema), ...bodies.map((b) => b.schema)].some((s) => marked(resolved(s, doc)));
}

/** The problem `errors[].field` names of the values a generated request carries at a bound (and `body`). */
export function boundedFields(op: DocOperation, doc: Record<string, any>, request: GeneratedRequest): Set<string> {
  const fields = new Set<string>();
  for (const p of (op.operation.parameters ?? []) as { name: string; in: string; schema?: JsonSchema }[]) {
    const schema = resolved(p.schema, doc);
    if (schema[BOUND] || schema.items?.[BOUND]) fields.add(`${p.in}.${p.name}`);
  }
  if (request.mediaType !== undefined && request.body !== undefined) {
    const schema = resolved(op.operation.requestBody.content[request.mediaType].schema, doc);
    for (const node of nodesOf(request.body, schema))
      if (node.schema[BOUND]) fields.add(['body', ...node.path].join('.'));
    // A refusal of the whole body (a form of more parts than the reader takes) counts as well.
    if (fields.size > 0) fields.add('body');
  }
  return fields;
}

/**
 * Whether a refusal of `field` is a rule between it and another parameter (`from` after `to`) that the
 * document states: the message names another parameter of the operation, and so does the field's description.
 * JSON Schema cannot say it across query parameters, so the description must.
 */
export function documentedCrossFieldRule(op: DocOperation, field: string, message: string): boolean {
  const params = (op.operation.parameters ?? []) as {
    name: string;
    in: string;
    description?: string;
    schema?: JsonSchema;
  }[];
  const own = params.find((p) => `${p.in}.${p.name}` === field);
  if (!own) return false;
  const described = `${own.description ?? ''} ${own.schema?.description ?? ''}`;
  const names = (text: string, name: string) => new RegExp(`(^|[^\\w.])(query\\.)?${name}\\b`).test(text);
  return params.some((p) => p !== own && names(message, p.name) && names(described, p.name));
}
