import fc from 'fast-check';
import { CONDITIONS, validish, type JsonSchema } from './fuzz/schema-arb.js';

/**
 * Requests generated from a published OpenAPI document (not from our zod schemas), as an outside
 * property-based tester does: every `$ref` resolved, path and query parameters and the body drawn from their
 * JSON Schemas, in each media type the operation declares (JSON, an URL-encoded form, a multipart form).
 */

export interface DocOperation {
  method: string;
  path: string;
  operationId: string;
  operation: Record<string, any>;
}

export interface GeneratedRequest {
  url: string;
  method: string;
  /** The drawn body as a value (for messages); `encoded` is what goes on the wire. */
  body?: unknown;
  mediaType?: string;
  /** The body in its media type; a FormData's Content-Type (with its boundary) is set by the request itself. */
  encoded?: BodyInit;
}

/** The request media types the generator can write. */
const WRITABLE = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/** A form field's text: objects as JSON text (the documents' `contentType: application/json` parts). */
const fieldText = (value: unknown) =>
  value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);

/**
 * A drawn body written in its media type. In a multipart form, a property of `format: binary` (or an array of
 * them) becomes file parts of the encoding's first content type, an object a part of type application/json,
 * anything else a text field; arrays repeat their part.
 */
export function encodeBody(
  mediaType: string,
  body: unknown,
  schema: JsonSchema,
  encoding: Record<string, { contentType?: string }> = {},
): BodyInit {
  if (mediaType === 'application/json') return JSON.stringify(body);
  const fields =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? Object.entries(body as Record<string, unknown>)
      : [];
  if (mediaType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams();
    for (const [key, value] of fields)
      for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) form.append(key, fieldText(v));
    return form.toString();
  }
  const form = new FormData();
  for (const [key, value] of fields) {
    const property: JsonSchema = schema.properties?.[key] ?? {};
    const binary = property.format === 'binary' || property.items?.format === 'binary';
    const partType = encoding[key]?.contentType?.split(',')[0]?.trim();
    for (const v of Array.isArray(value) && (binary || property.type === 'array') ? value : [value]) {
      if (v === undefined) continue;
      if (binary)
        form.append(key, new Blob([fieldText(v)], { type: partType ?? 'application/octet-stream' }), `${key}.bin`);
      else if (v !== null && typeof v === 'object')
        form.append(key, new Blob([JSON.stringify(v)], { type: 'application/json' }), `${key}.json`);
      else form.append(key, String(v));
    }
  }
  return form;
}

/** Every operation of a document. */
export function operationsOf(doc: Record<string, any>): DocOperation[] {
  const out: DocOperation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, operation] of Object.entries<Record<string, any>>(item)) {
      if (operation?.operationId)
        out.push({ method: method.toUpperCase(), path, operationId: operation.operationId, operation });
    }
  }
  return out;
}

/** A schema with its `$ref`s inlined and `allOf` merged (a nesting limit guards recursive models). */
export function resolved(schema: JsonSchema | undefined, doc: Record<string, any>, depth = 0): JsonSchema {
  if (!schema || depth > 12) return {};
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    const { $ref: _ref, ...rest } = schema;
    return resolved({ ...doc.components.schemas[name], ...rest }, doc, depth + 1);
  }
  if (schema.allOf) {
    const parts = (schema.allOf as JsonSchema[]).map((s) => resolved(s, doc, depth + 1));
    const { allOf: _all, ...rest } = schema;
    // An `if`/`then` part is a rule on the whole object (VERIFY requires subjectId): kept apart as a condition
    // (schema-arb.ts's CONDITIONS), since merging two of them key by key would keep only the last.
    const conditional = (p: JsonSchema) => p.if !== undefined;
    return resolved(
      parts
        .filter((p) => !conditional(p))
        .reduce(
          (acc, p) => ({
            ...acc,
            ...p,
            properties: { ...acc.properties, ...p.properties },
            required: [...(acc.required ?? []), ...(p.required ?? [])],
          }),
          { ...rest, [CONDITIONS]: [...(rest[CONDITIONS] ?? []), ...parts.filter(conditional)] },
        ),
      doc,
      depth + 1,
    );
  }
  const out: JsonSchema = { ...schema };
  if (out.properties)
    out.properties = Object.fromEntries(
      Object.entries<JsonSchema>(out.properties).map(([k, v]) => [k, resolved(v, doc, depth + 1)]),
    );
  if (out.items) out.items = resolved(out.items, doc, depth + 1);
  for (const key of ['anyOf', 'oneOf'] as const)
    if (out[key]) out[key] = (out[key] as JsonSchema[]).map((s) => resolved(s, doc, depth + 1));
  if (typeof out.additionalProperties === 'object')
    out.additionalProperties = resolved(out.additionalProperties, doc, depth + 1);
  return out;
}

/** A query or path value as text: arrays joined by commas (the documents' `explode: false` style for ids). */
function asText(value: unknown): string {
  if (Array.isArray(value)) return value.map(asText).join(',');
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The arbitrary of one operation's requests: path parameters, query parameters, JSON body. */
export function requestArbitrary(op: DocOperation, doc: Record<string, any>): fc.Arbitrary<GeneratedRequest> {
  const params = (op.operation.parameters ?? []) as {
    name: string;
    in: string;
    required?: boolean;
    schema?: JsonSchema;
  }[];
  const pathModel: Record<string, fc.Arbitrary<unknown>> = {};
  const queryModel: Record<string, fc.Arbitrary<unknown>> = {};
  const required: string[] = [];
  for (const p of params) {
    const schema = resolved(p.schema, doc);
    // JSON text of a schema (JSON Schema's contentMediaType/contentSchema) is drawn as that JSON, then written out.
    const base =
      schema.contentMediaType === 'application/json' && schema.contentSchema
        ? validish(schema.contentSchema, {}, p.name)
            .map((v) => JSON.stringify(v))
            .filter((t) => t.length <= (schema.maxLength ?? Infinity))
        : validish(schema, {}, p.name);
    // Path segments must be non-empty to reach the route at all.
    const arb = p.in === 'path' ? base.filter((v) => asText(v).length > 0) : base;
    if (p.in === 'path') pathModel[p.name] = arb;
    if (p.in === 'query') {
      queryModel[p.name] = arb;
      if (p.required) required.push(p.name);
    }
  }
  const content: Record<string, { schema?: JsonSchema; encoding?: Record<string, { contentType?: string }> }> =
    op.operation.requestBody?.content ?? {};
  const mediaTypes = Object.keys(content).filter((t) => WRITABLE.includes(t));
  type DrawnBody = { mediaType?: string; body?: unknown; encoded?: BodyInit };
  const body: fc.Arbitrary<DrawnBody> = mediaTypes.length
    ? fc.oneof(
        ...mediaTypes.map((mediaType) => {
          const schema = resolved(content[mediaType]!.schema, doc);
          return validish(schema, {}).map(
            (value): DrawnBody => ({
              mediaType,
              body: value,
              encoded: encodeBody(mediaType, value, schema, content[mediaType]!.encoding),
            }),
          );
        }),
      )
    : fc.constant({});
  return fc
    .record({
      path: fc.record(pathModel),
      query: fc.record(queryModel, { requiredKeys: required }),
      drawn: body,
    })
    .map(({ path, query, drawn }) => {
      const concrete = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(asText(path[name])));
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, asText(value));
      const qs = search.toString();
      return { url: `${concrete}${qs ? `?${qs}` : ''}`, method: op.method, ...drawn };
    });
}

/** What is wrong with an answer to a schema-valid request, or null when it keeps the document's word. */
export async function contractBreach(op: DocOperation, res: Response): Promise<string | null> {
  const documented = Object.keys(op.operation.responses ?? {});
  const text = await res.text();
  if (res.status === 500) return `500: ${text.slice(0, 300)}`;
  if (!documented.includes(String(res.status)) && !documented.includes('default'))
    return `${res.status} is not documented (${documented.join(', ')}): ${text.slice(0, 200)}`;
  const declared = Object.keys(op.operation.responses?.[String(res.status)]?.content ?? {});
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (declared.includes('application/json') && !declared.includes('application/problem+json') && res.status >= 400) {
    // An error the document declares as plain JSON (the token endpoint's RFC 6749 errors): that JSON, with its code.
    if (type !== 'application/json')
      return `${res.status} as ${type || 'no media type'}, documented as application/json`;
    try {
      if (typeof JSON.parse(text).error !== 'string')
        return `${res.status} without an error code: ${text.slice(0, 200)}`;
    } catch {
      return `${res.status} is not JSON: ${text.slice(0, 200)}`;
    }
    return null;
  }
  if (res.status === 400 || res.status === 422) {
    // A refusal of a schema-valid request must name the field it objects to.
    let problem: Record<string, any>;
    try {
      problem = JSON.parse(text);
    } catch {
      return `${res.status} without a problem body`;
    }
    const fields = Array.isArray(problem.errors)
      ? problem.errors.map((e: { field?: string }) => e.field).filter(Boolean)
      : [];
    if (fields.length === 0 && !/\b(body|query|path)(\.|\b)/.test(String(problem.detail)))
      return `${res.status} names no field: ${text.slice(0, 200)}`;
  }
  return null;
}
