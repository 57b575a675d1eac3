import { getOpenApiMetadata } from '@asteasolutions/zod-to-openapi';
import { binary, z } from '../schemas/common.js';
import { DomainError } from '../services/errors.js';
import { jsonFieldNames, type FieldNamer } from '../schemas/field-names.js';
import { readFormParts, type FormPart } from './form-parts.js';
import { MAX_JSON_DEPTH, nestingDepth } from './validation.js';
import type { FilePart, FormSpec } from '../operations/form-spec.js';

const MULTIPART = /^multipart\/form-data\b/i;

/** The request is a multipart form (the boundary parameter is the parser's business). */
export const isMultipart = (request: Request) => MULTIPART.test(request.headers.get('content-type') ?? '');

const bad = (field: string, message: string) =>
  new DomainError('validation', `${field} ${message}`, { errors: [{ field, message }] });

/** Most bytes a part that is not a file of the form (subjectId, metadata, options, an unknown one) may hold. */
const MAX_TEXT_PART_BYTES = 1024 * 1024;

/**
 * Read a multipart body and build the body it stands for, with the files' bytes as `Uint8Array`s where the
 * JSON body has their base64 (the schemas take either). Parts are handled as they end, so a refusal stops the
 * read: a 400 naming the part for a file sent as text (or text as a file), JSON that does not parse, a
 * single-valued field given twice, a text part over {@link MAX_TEXT_PART_BYTES}; the 413 of the body limit when
 * the count passes it; unknown parts are passed on for the schema to name. Part names are only ever own keys
 * (`__proto__` and `constructor` are names like any other).
 */
export async function readFormBody(request: Request, spec: FormSpec): Promise<Record<string, unknown>> {
  const files = new Map<string, { file: FilePart; values: (Uint8Array | string)[] }>();
  const fields = new Map<string, unknown>();
  await readFormParts(request, async (part) => {
    const field = `body.${part.name}`;
    const file = Object.hasOwn(spec.files, part.name) ? spec.files[part.name]! : undefined;
    if (file) {
      const entry = files.get(part.name) ?? { file, values: [] };
      if (!file.many && entry.values.length > 0) throw bad(field, 'is given more than once (one part of that name)');
      if (part.isFile) entry.values.push(await part.bytes());
      else if (file.textIsBase64) entry.values.push(await textOf(part, field));
      else throw bad(field, `must be a file part (curl -F ${part.name}=@file), not a text field`);
      files.set(part.name, entry);
      return;
    }
    if (fields.has(part.name)) throw bad(field, 'is given more than once');
    const json = spec.json?.includes(part.name);
    if (!json && !spec.text?.includes(part.name)) {
      // Not a field of this operation: passed on for the schema to name (a file part's bytes are not its business).
      fields.set(part.name, part.isFile ? '(a file part)' : await textOf(part, field));
      return;
    }
    // A file where text belongs is read as text (a `metadata` part sent as @meta.json is still JSON).
    const text = await textOf(part, field);
    fields.set(part.name, json ? parseJsonPart(text, field) : text);
  });
  const body: Record<string, unknown> = {};
  const put = (name: string, value: unknown) =>
    Object.defineProperty(body, name, { value, enumerable: true, writable: true, configurable: true });
  for (const [name, value] of fields) put(name, value);
  for (const [name, { file, values }] of files) {
    if (fields.has(file.into)) throw bad(`body.${file.into}`, `is given both as a field and as ${name} parts`);
    put(file.into, file.many ? values.map((v) => (file.key ? { [file.key]: v } : v)) : values[0]);
  }
  return body;
}

/** A part's text, strictly UTF-8 (as JSON bodies are). */
async function textOf(part: FormPart, field: string): Promise<string> {
  if (part.size > MAX_TEXT_PART_BYTES) throw bad(field, `is longer than ${MAX_TEXT_PART_BYTES} bytes`);
  const bytes = await part.bytes();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw bad(field, 'is not valid UTF-8');
  }
}

function parseJsonPart(text: string, field: string): unknown {
  if (nestingDepth(text) > MAX_JSON_DEPTH) throw bad(field, `is nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw bad(field, 'is not valid JSON');
  }
}

/**
 * Where a JSON body of the operation carries the samples its form takes as files (`['faces', '*', 'image']`),
 * so that the JSON reader hands their bytes on too.
 */
export function samplePaths(spec: FormSpec): string[][] {
  return Object.values(spec.files).map((file) => [
    file.into,
    ...(file.many ? ['*'] : []),
    ...(file.key ? [file.key] : []),
  ]);
}

/**
 * The form's names for the places of the JSON body it became, for every error built from then on (the
 * schema's, the services'): the second face, `['faces', 1, 'image']` (a JSON body's `body.faces.1.image`), is
 * the second `image` part, `body.image.1`; the list `['faces']` is `body.image`; a part that is a field of its
 * own (`subjectId`, `metadata.office`) keeps its path.
 */
export function formFieldNames(spec: FormSpec): FieldNamer {
  const partInto = new Map(Object.entries(spec.files).map(([name, file]) => [file.into, { name, file }]));
  return (path) => {
    const part = typeof path[0] === 'string' ? partInto.get(path[0]) : undefined;
    if (!part) return jsonFieldNames(path);
    const { name, file } = part;
    if (!file.many) return jsonFieldNames([name, ...path.slice(1)]);
    // [into, index, key, ...rest]: the part's index stands for the sample, the key is the part itself.
    const [, index, key, ...rest] = path;
    if (index === undefined) return jsonFieldNames([name]);
    return jsonFieldNames([name, index, ...(key === undefined || key === file.key ? [] : [key]), ...rest]);
  };
}

/** The minItems and maxItems a JSON body's list field states in the documents. */
function listLength(field: z.ZodType): { minItems?: number; maxItems?: number } {
  const schema = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as {
    minItems?: number;
    maxItems?: number;
  };
  return {
    ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
    ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
  };
}

/**
 * The form as the OpenAPI document states it: an object with every part (files as binary, the other fields
 * with the JSON body's own schemas, so the two never disagree) and an encoding object with each part's media
 * types.
 */
export function formDocument(spec: FormSpec, jsonBody: z.ZodType) {
  const shape = (jsonBody as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
  const parts: Record<string, z.ZodType> = {};
  const encoding: Record<string, { contentType: string }> = {};
  for (const [name, part] of Object.entries(spec.files)) {
    // Optional here; which parts the form needs is said by formRules, as the JSON body says it of its fields.
    // A part given many times takes as many as the JSON body's list (at most 10 images), stated as its twin does.
    const list = part.many && shape[part.into] ? listLength(shape[part.into]!) : {};
    parts[name] = (part.many ? z.array(binary) : binary).optional().openapi({ description: part.description, ...list });
    encoding[name] = { contentType: part.mediaTypes.join(', ') };
  }
  for (const name of spec.json ?? []) {
    const field = shape[name];
    if (field)
      parts[name] = field.openapi({
        description: `${describe(field)}JSON text of the object, a part of type application/json.`,
      });
    encoding[name] = { contentType: 'application/json' };
  }
  for (const name of spec.text ?? []) if (shape[name]) parts[name] = shape[name];
  return { schema: z.object(parts).openapi(formRules(spec, jsonBody)), encoding };
}

/**
 * The JSON body's cross-field rules (`anyOf`, `allOf`) and its required fields, said of the form's parts: a
 * file part required where its JSON field is (checkImage's `image`), and `faces` read as the `image` parts.
 */
function formRules(spec: FormSpec, jsonBody: z.ZodType): Record<string, unknown> {
  const partOf = new Map(Object.entries(spec.files).map(([name, file]) => [file.into, name]));
  const rename = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rename);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        key === 'required' && Array.isArray(inner)
          ? inner.map((name: string) => partOf.get(name) ?? name)
          : key === 'properties' && typeof inner === 'object' && inner !== null
            ? Object.fromEntries(Object.entries(inner).map(([name, v]) => [partOf.get(name) ?? name, rename(v)]))
            : rename(inner),
      ]),
    );
  };
  const shape = (jsonBody as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
  const formParts = [...Object.keys(spec.files), ...(spec.json ?? []), ...(spec.text ?? [])];
  const required = Object.entries(shape)
    .filter(([name, field]) => !field.safeParse(undefined).success && formParts.includes(partOf.get(name) ?? name))
    .map(([name]) => partOf.get(name) ?? name);
  const { anyOf, allOf } = getOpenApiMetadata(jsonBody) as { anyOf?: unknown; allOf?: unknown };
  return {
    ...(required.length ? { required } : {}),
    ...(anyOf ? { anyOf: rename(anyOf) } : {}),
    ...(allOf ? { allOf: rename(allOf) } : {}),
  };
}

const describe = (schema: z.ZodType) => {
  const text = getOpenApiMetadata(schema).description ?? schema.description;
  return text ? `${text.replace(/\.?$/, '.')} ` : '';
};
