import { DomainError } from '../services/errors.js';
import { bodyChunks, joinPaced } from './body-chunks.js';
import { JsonSamples, JsonScanError } from './json-samples.js';
import { MAX_JSON_DEPTH } from './validation.js';

/** Most a sample-carrying body may hold besides its samples: metadata (16 KiB), options, identifiers. */
export const MAX_OTHER_BYTES = 1024 * 1024;

interface JsonBodyOptions {
  /** The other media type the operation takes (multipart/form-data), for the 415's message. */
  alsoTaken?: string;
  /**
   * Where the body carries base64 samples (keys, `*` for any array item): they are handed on as bytes, decoded
   * while the body arrives, and the rest of the body may hold at most {@link MAX_OTHER_BYTES}.
   */
  samples?: readonly (readonly string[])[];
}

const invalidBody = (message: string, detail = `body: ${message}`) =>
  new DomainError('validation', detail, { errors: [{ field: 'body', message }] });

/**
 * Read a JSON body, answering 415 for another media type, 400 for malformed UTF-8 or JSON, nesting deeper than
 * {@link MAX_JSON_DEPTH}, or a sample that is not base64 (naming it: `body.faces.0.image`), and the 413 of the
 * body limit. The body is read chunk by chunk and each chunk handled as it comes (json-samples.ts), so a large
 * body is never one long turn of the event loop; the samples arrive as `Uint8Array`s where the JSON had their
 * base64 (the schemas take either).
 */
export async function readJsonBody(request: Request, options: JsonBodyOptions = {}): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  if (!request.body || request.headers.get('content-length') === '0') throw required();
  if (type && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new DomainError(
      'unsupported-media-type',
      `body must be application/json${options.alsoTaken ? ` or ${options.alsoTaken}` : ''}, not ${type.split(';')[0]}`,
    );
  }
  const scan = new JsonSamples(
    options.samples ?? [],
    options.samples ? MAX_OTHER_BYTES : Number.POSITIVE_INFINITY,
    MAX_JSON_DEPTH,
  );
  let scanned: ReturnType<JsonSamples['end']>;
  try {
    for await (const chunk of bodyChunks(request.body)) scan.write(chunk);
    scanned = scan.end();
  } catch (error) {
    if (error instanceof JsonScanError) {
      throw new DomainError('validation', `${error.field} ${error.reason}`, {
        errors: [{ field: error.field, message: error.reason }],
      });
    }
    throw error;
  }
  if (scanned.text.trim() === '' && scanned.samples.length === 0) throw required();
  let body: unknown;
  try {
    body = JSON.parse(scanned.text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'unparseable';
    throw invalidBody('is not valid JSON', `body: malformed JSON (${reason})`);
  }
  for (const sample of scanned.samples)
    putBack(body, sample.path, sample.placeholder, await joinPaced(sample.pieces, sample.size));
  return body;
}

const required = () => invalidBody('is required', 'body: a JSON body is required');

/** Put a sample's bytes where its placeholder stands (a later duplicate key may have replaced it: then not). */
function putBack(body: unknown, path: (string | number)[], placeholder: string, bytes: Uint8Array) {
  let at: unknown = body;
  for (const step of path.slice(0, -1)) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, step)) return;
    at = (at as Record<string | number, unknown>)[step];
  }
  const last = path[path.length - 1]!;
  if (at !== null && typeof at === 'object' && (at as Record<string | number, unknown>)[last] === placeholder)
    (at as Record<string | number, unknown>)[last] = bytes;
}
