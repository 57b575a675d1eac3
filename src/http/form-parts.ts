import { ContentDisposition } from '@remix-run/headers/content-disposition';
import {
  getMultipartBoundary,
  MaxHeaderSizeExceededError,
  MaxPartsExceededError,
  MultipartParseError,
  MultipartParser,
  type MultipartPart,
} from '@remix-run/multipart-parser';
import { DomainError } from '../services/errors.js';
import { bodyChunks, joinPaced } from './body-chunks.js';

/**
 * The parts of a multipart/form-data body (RFC 7578), read as the body arrives by Remix's streaming parser
 * (@remix-run/multipart-parser: Node, Deno, Bun and Workers alike), with the body's chunks paced by
 * body-chunks.ts. Content-Disposition parameters are read by @remix-run/headers, which honours quoted strings
 * (`filename="a; name=typeX"; name="image"` is the part `image`) and `filename*` (RFC 6266 / RFC 8187).
 * Node's own `Request.formData()` was not used: on Node 20 it refuses both of those, says only that it
 * failed, and reads the whole body before the first part.
 */

/** One part as the form reader sees it. */
export interface FormPart {
  name: string;
  /** It came as a file (a `filename` or `filename*` parameter, even empty), not a text field. */
  isFile: boolean;
  size: number;
  /** Its bytes, joined from the chunks they arrived in (a piece per turn of the event loop). */
  bytes(): Promise<Uint8Array>;
}

/** Most parts a form may have: the photo operations take at most 10 images, 10 recordings and 5 fields. */
const MAX_PARTS = 64;
/** Longest header block of one part (a Content-Disposition with a long file name, and a Content-Type). */
const MAX_HEADER_BYTES = 16 * 1024;

const malformed = (reason: string) =>
  new DomainError('validation', `body is not a well-formed multipart/form-data body: ${reason}`, {
    errors: [{ field: 'body', message: `is not a well-formed multipart/form-data body: ${reason}` }],
  });

/**
 * Every part of the request's form, handed to `onPart` as soon as it has ended (a refusal there stops the read).
 * @throws a 400 naming `body` for a body that is not a form (no boundary, no closing delimiter, a part without
 * a form-data name, headers over 16 KiB, more than {@link MAX_PARTS} parts); the 413 of the body limit.
 */
export async function readFormParts(request: Request, onPart: (part: FormPart) => Promise<void>): Promise<void> {
  const boundary = getMultipartBoundary(request.headers.get('content-type') ?? '')?.trim();
  if (!boundary || boundary.length > 70) throw malformed('the Content-Type names no boundary (1 to 70 characters)');
  if (!request.body) throw malformed('the body holds no part (no boundary delimiter)');
  const parser = new MultipartParser(boundary, {
    maxHeaderSize: MAX_HEADER_BYTES,
    // One more than the form may have: the preamble's stand-in part below.
    maxParts: MAX_PARTS + 1,
    // Sizes are the body limit's (counted as the body arrives) and the schemas' (per sample).
    maxFileSize: Number.MAX_SAFE_INTEGER,
    maxTotalSize: Number.MAX_SAFE_INTEGER,
  });
  let first = true;
  let ended = false;
  const take = async (chunk: Uint8Array) => {
    try {
      for (const part of parser.write(chunk)) {
        // The parser wants the body to start with the delimiter, where RFC 2046 lets a preamble come first; so
        // the body is preceded by a part of our own, which the preamble (if any) ends up in and which is dropped.
        if (first) first = false;
        else await onPart(formPart(part));
      }
    } catch (error) {
      // Bytes after the close delimiter (RFC 2046's epilogue, or a trailing CRLF in a chunk of its own): the
      // parser refuses any, RFC 2046 lets them be; they are ignored.
      if (error instanceof MultipartParseError && error.message === AFTER_THE_END) ended = true;
      else throw error;
    }
  };
  try {
    await take(new TextEncoder().encode(`--${boundary}\r\nContent-Type: text/plain\r\n\r\n\r\n`));
    for await (const chunk of bodyChunks(request.body)) if (!ended) await take(chunk);
    parser.finish();
  } catch (error) {
    if (error instanceof MaxPartsExceededError) throw malformed(`the form has more than ${MAX_PARTS} parts`);
    if (error instanceof MaxHeaderSizeExceededError)
      throw malformed('the headers of a part do not end (or are longer than 16 KiB)');
    if (error instanceof MultipartParseError) throw malformed('the body ends inside a part (no closing boundary)');
    throw error;
  }
}

/** What the parser says when given bytes after the close delimiter (pinned by test/http/multipart-rfc7578.test.ts). */
const AFTER_THE_END = 'Unexpected data after end of stream';

function formPart(part: MultipartPart): FormPart {
  let headers: MultipartPart['headers'];
  try {
    headers = part.headers;
  } catch {
    throw malformed('the headers of a part are not valid UTF-8');
  }
  const disposition = ContentDisposition.from(headers['content-disposition'] ?? null);
  if (disposition.type?.toLowerCase() !== 'form-data') throw malformed('a part has no Content-Disposition: form-data');
  if (disposition.name === undefined) throw malformed('a part has no name');
  return {
    name: disposition.name,
    // Presence is what matters; the name itself is not used (and `filename*` is not decoded for nothing).
    isFile: disposition.filename !== undefined || disposition.filenameSplat !== undefined,
    size: part.size,
    bytes: () => joinPaced(part.content, part.size),
  };
}
