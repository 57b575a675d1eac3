import type { ZodType } from 'zod';

/**
 * Operations whose presenters build the answer in exactly its schema's shape and order, so it goes out without
 * the schema run over it again: the subject reads, the hottest reads there are, where that parse cost 0.2 ms
 * for a subject and 0.9 ms for a page of 20 (most of what a read cost after its one query). Their answers are
 * compared byte for byte with the schema's output by test/http/subject-one-query.test.ts, and checked on every
 * request the test suite makes (BIMS_CHECK_ANSWERS=on).
 *
 * Every other operation's answer still passes through its schema, which may strip keys a presenter adds (the
 * `reason` of a refused checkImage, for one) and so keeps answers to what the documents promise.
 */
const PRESENTED_IN_SHAPE: ReadonlySet<string> = new Set([
  'getSubjects',
  'getSubjectById',
  'getSubjectBySubjectId',
  'getSubjectByOperationId',
  'getMultimodalSubjects',
  'getMultimodalSubjectById',
  'getMultimodalSubjectBySubjectId',
  'getMultimodalSubjectByOperationId',
]);

/** The JSON answer of operation `operationId` as it goes out; `check` (tests) verifies a skipped parse would change nothing. */
export function documentedAnswer(schema: ZodType, data: unknown, operationId: string, check: boolean): unknown {
  if (!PRESENTED_IN_SHAPE.has(operationId)) return schema.parse(data);
  if (check) checkedAnswer(schema, data, operationId);
  return data;
}

/**
 * The JSON text of operation `operationId` as it goes out, when its handler made the text itself (a
 * `PresentedJson`, the subject reads): only an operation presented in its schema's shape may skip the schema;
 * any other's text is parsed and shaped like an object answer. `check` (tests) verifies the text is exactly
 * what the schema makes of it.
 */
export function documentedText(schema: ZodType | undefined, text: string, operationId: string, check: boolean): string {
  if (!schema) return text;
  if (!PRESENTED_IN_SHAPE.has(operationId)) return JSON.stringify(schema.parse(JSON.parse(text)));
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
