import { getOpenApiMetadata } from '@asteasolutions/zod-to-openapi';
import { binary, z } from '../schemas/common.js';
import { DomainError, type FieldError } from '../services/errors.js';
import { toBase64 } from '../encoding/base64.js';
import { bodyLimitError } from './body-limit.js';
import { MultipartError, parseMultipart, type FormPart } from './multipart-parse.js';
import { MAX_JSON_DEPTH, nestingDepth } from './validation.js';
import type { FormSpec } from '../operations/form-spec.js';

const MULTIPART = /^multipart\/form-data\b/i;

/** The request is a multipart form (the boundary parameter is the parser's business). */
export const isMultipart = (request: Request) => MULTIPART.test(request.headers.get('content-type') ?? '');

const bad = (field: string, message: string) =>
  new DomainError('validation', `${field} ${message}`, { errors: [{ field, message }] });

/**
 * Read a multipart body and build the JSON body it stands for. Answers a 400 naming the part for a file sent
 * as text (or text as a file), JSON that does not parse, or a single-valued field given twice; the 413 of the
 * body limit when the count passes it while parsing; unknown parts are passed on for the schema to name.
 */
export async function readFormBody(request: Request, spec: FormSpec): Promise<Record<string, unknown>> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await request.arrayBuffer());
  } catch (error) {
    const tooLarge = bodyLimitError(error);
    if (tooLarge) throw tooLarge;
    throw bad('body', 'could not be read');
  }
  let parts: FormPart[];
  try {
    parts = parseMultipart(bytes, request.headers.get('content-type') ?? '');
  } catch (error) {
    if (!(error instanceof MultipartError)) throw error;
    throw bad('body', `is not a well-formed multipart/form-data body: ${error.message}`);
  }
  const byName = new Map<string, FormPart[]>();
  for (const part of parts) byName.set(part.name, [...(byName.get(part.name) ?? []), part]);
  const body: Record<string, unknown> = {};
  for (const [name, values] of byName) {
    const field = `body.${name}`;
    const file = spec.files[name];
    if (file) {
      if (!file.many && values.length > 1) throw bad(field, 'is given more than once (one part of that name)');
      const encoded: string[] = [];
      for (const value of values) {
        if (value.filename !== undefined) encoded.push(toBase64(value.data));
        else if (file.textIsBase64) encoded.push(textOf(value.data, field));
        else throw bad(field, `must be a file part (curl -F ${name}=@file), not a text field`);
      }
      body[file.into] = file.many ? encoded.map((b64) => (file.key ? { [file.key]: b64 } : b64)) : encoded[0];
      continue;
    }
    if (values.length > 1) throw bad(field, 'is given more than once');
    const value = values[0]!;
    if (!spec.json?.includes(name) && !spec.text?.includes(name)) {
      // Not a field of this operation: passed on for the schema to name (a file part's bytes are not its business).
      body[name] = value.filename !== undefined ? '(a file part)' : textOf(value.data, field);
      continue;
    }
    // A file where text belongs is read as text (a `metadata` part sent as @meta.json is still JSON).
    const text = textOf(value.data, field);
    body[name] = spec.json?.includes(name) ? parseJsonPart(text, field) : text;
  }
  return body;
}

/** A part's text, strictly UTF-8 (as JSON bodies are). */
function textOf(data: Uint8Array, field: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
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
 * A failure found in the JSON body the form became names the form's parts instead: `body.faces.1.image`
 * (the service's name for the second face) is the second `image` part, `body.image.1`.
 */
export function renameFormFields(error: DomainError, spec: FormSpec): DomainError {
  const renames = Object.entries(spec.files)
    .filter(([name, part]) => name !== part.into)
    .map(([name, part]) => ({
      pattern: new RegExp(`\\bbody\\.${part.into}(\\.\\d+)?${part.key ? `(?:\\.${part.key})?` : ''}\\b`, 'g'),
      replacement: `body.${name}$1`,
    }));
  if (renames.length === 0) return error;
  const rename = (text: string) =>
    renames.reduce((out, { pattern, replacement }) => out.replace(pattern, replacement), text);
  const extras: Record<string, unknown> = { ...error.extras };
  if (error.extras.errors)
    extras.errors = error.extras.errors.map((e: FieldError) => ({ ...e, field: rename(e.field) }));
  if (typeof extras.reason === 'string') extras.reason = rename(extras.reason);
  return new DomainError(error.code, rename(error.detail), extras, error.operatorDetail);
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
    parts[name] = (part.many ? z.array(binary) : binary).optional().openapi({ description: part.description });
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
  return { schema: z.object(parts), encoding };
}

const describe = (schema: z.ZodType) => {
  const text = getOpenApiMetadata(schema).description ?? schema.description;
  return text ? `${text.replace(/\.?$/, '.')} ` : '';
};
