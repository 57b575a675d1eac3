import type { ZodType } from 'zod';

/**
 * An operation whose entry says `read.presentedInShape` (the subject reads, the hottest reads there are) has its
 * answer built in exactly its schema's shape and order, so it goes out without the schema run over it again:
 * that parse cost 0.2 ms for a subject and 0.9 ms for a page of 20 (most of what a read cost after its one
 * query). Their answers are compared byte for byte with the schema's output by
 * test/http/subject-one-query.test.ts, and checked on every request the test suite makes (BIMS_CHECK_ANSWERS=on).
 *
 * Every other operation's answer still passes through its schema, which may strip keys a presenter adds (the
 * `reason` of a refused checkImage, for one) and so keeps answers to what the documents promise.
 */
interface Answering {
  operationId: string;
  /** The entry's `read.presentedInShape`: its answer may skip the schema's parse. */
  inShape: boolean;
  /** Verify (tests) that a skipped parse would change nothing. */
  check: boolean;
}

/** The JSON answer of an operation as it goes out. */
export function documentedAnswer(schema: ZodType, data: unknown, { operationId, inShape, check }: Answering): unknown {
  if (!inShape) return schema.parse(data);
  if (check) checkedAnswer(schema, data, operationId);
  return data;
}

/**
 * The JSON text of an operation as it goes out, when its handler made the text itself (a `PresentedJson`, the
 * subject reads): only an operation presented in its schema's shape may skip the schema; any other's text is
 * parsed and shaped like an object answer. `check` (tests) verifies the text is exactly what the schema makes of it.
 */
export function documentedText(
  schema: ZodType | undefined,
  text: string,
  { operationId, inShape, check }: Answering,
): string {
  if (!schema) return text;
  if (!inShape) return JSON.stringify(schema.parse(JSON.parse(text)));
  if (check) {
    const data: unknown = JSON.parse(text);
    if (JSON.stringify(data) !== text)
      throw new Error(`The answer of ${operationId} is not plain JSON text: ${text.slice(0, 500)}`);
    checkedAnswer(schema, data, operationId);
  }
  return text;
}

/**
 * Refuse an answer the schema refuses (an error of ours: recorded, answered 500) or would change (a key it
 * strips, a default it fills, a value it transforms, a different key order): without the parse that answer
 * would go out as it is and differ from what the documents promise and what was sent before.
 */
function checkedAnswer(schema: ZodType, data: unknown, operationId: string): void {
  const sent = JSON.stringify(data);
  const documented = JSON.stringify(schema.parse(data));
  if (sent !== documented) {
    throw new Error(
      `The answer of ${operationId} is not exactly its schema's shape: it would be sent as ${sent.slice(0, 500)} but the schema makes it ${documented.slice(0, 500)}`,
    );
  }
}
