import { componentProblems, externalOperations } from '../external-ops.js';

/**
 * What every answer to a hostile request must satisfy, whatever the request: no 5xx (but the documented
 * component-unavailable answers of the external operations), every error a problem+json document, and
 * nothing of the inside showing: no stack frame, no source or dependency path, no database error text.
 */

/** Markers of internals. The working directory is added at run time. */
const LEAKS: [string, RegExp][] = [
  ['stack frame', /\bat (?:async )?[\w$.<>[\]]+ \([^)]*:\d+:\d+\)|\n\s+at [\w$.<>]+/],
  ['source path', /\bsrc\/[\w/.-]+\.(?:ts|js)\b/],
  ['dependency path', /node_modules/],
  ['file URL', /file:\/\//],
  [
    'database error',
    /violates (?:unique|foreign key|check|not-null) constraint|syntax error at or near|invalid input syntax for|relation "\w+" does not exist|stack depth limit exceeded/,
  ],
];

/**
 * Markers of what only the operator should read: absolute server paths, commands to run, configuration
 * variables to set. Problem details never carry them (the log does); see {@link operatorLeaks}.
 */
const OPERATOR_ONLY: [string, RegExp][] = [
  ['server path', /(?:^|[\s'"(=:])\/(?:home|tmp|usr|var|opt|work|root|srv|etc|nonexistent[\w-]*)\/[\w.-]/],
  ['command to run', /\brun `|\bnpm run\b|\bscripts\/[\w.-]+\.(?:mjs|js|ts|sh)\b/],
  ['configuration variable', /\bBIMS_[A-Z][A-Z_]+\b/],
];

/** What in a problem document is meant for the operator rather than the API caller (empty when nothing is). */
export function operatorLeaks(text: string): string[] {
  return OPERATOR_ONLY.flatMap(([what, re]) => {
    const m = text.match(re);
    return m
      ? [`a ${what}: '${m[0].trim()}' in ${text.slice(Math.max(0, (m.index ?? 0) - 80), (m.index ?? 0) + 120)}`]
      : [];
  });
}

/**
 * The validator's own wording (zod's "expected nonoptional, received undefined", "Too big: expected ...
 * <=10"), which the interface replaces with its own (src/schemas/messages.ts, issue 32 point 8).
 */
export const VALIDATOR_WORDING = /expected|received|Invalid (input|option|UUID|ISO)|Too (small|big)|nonoptional|>=|<=/;

/** Operations whose successful answers carry call stacks on purpose: the exception log, for administrators. */
const SHOWS_STACKS_BY_DESIGN = new Set(['getExceptionsCallstackById', 'getAllExceptions']);

const TEXTUAL = /json|text|svg|xml|html/i;

/** The problems with one answer (empty when it is fine). `bodyText` is null for binary answers. */
export function judgeAnswer(operationId: string, res: Response, bodyText: string | null): string[] {
  const wrong: string[] = [];
  const type = res.headers.get('content-type') ?? '';
  if (res.status >= 500) {
    const documented =
      externalOperations.has(operationId) &&
      componentProblems[res.status] &&
      bodyText?.includes(`/${componentProblems[res.status]}"`);
    if (!documented) wrong.push(`answered ${res.status}: ${bodyText?.slice(0, 400)}`);
  }
  if (res.status >= 400) {
    if (!/^application\/problem\+json/.test(type))
      wrong.push(`a ${res.status} of type '${type}', not application/problem+json`);
    else {
      try {
        const p = JSON.parse(bodyText ?? '');
        if (
          typeof p.type !== 'string' ||
          typeof p.title !== 'string' ||
          typeof p.detail !== 'string' ||
          p.status !== res.status
        ) {
          wrong.push(`a malformed problem: ${bodyText?.slice(0, 300)}`);
        }
        // The request's own path (`instance`, echoed in a route-not-found detail) is the client's words, not ours.
        const own =
          typeof p.instance === 'string' && p.instance.length > 1
            ? (bodyText ?? '').split(p.instance).join('')
            : (bodyText ?? '');
        for (const leak of operatorLeaks(own)) wrong.push(`a problem carrying ${leak}`);
        for (const error of Array.isArray(p.errors) ? (p.errors as { field?: string; message?: unknown }[]) : [])
          if (typeof error.message === 'string' && VALIDATOR_WORDING.test(error.message))
            wrong.push(`a field error in the validator's words: ${error.field}: ${error.message}`);
      } catch {
        wrong.push(`a problem+json that is not JSON: ${bodyText?.slice(0, 300)}`);
      }
    }
  }
  const cwd = process.cwd();
  const scan = (where: string, text: string) => {
    if (text.includes(cwd)) wrong.push(`${where} names the working directory`);
    for (const [what, re] of LEAKS) {
      const m = text.match(re);
      if (m)
        wrong.push(
          `${where} shows a ${what}: '${m[0]}' in ${text.slice(Math.max(0, (m.index ?? 0) - 80), (m.index ?? 0) + 120)}`,
        );
    }
  };
  res.headers.forEach((value, name) => scan(`header ${name}`, value));
  const byDesign = res.status < 300 && SHOWS_STACKS_BY_DESIGN.has(operationId);
  if (bodyText !== null && !byDesign) scan('body', bodyText);
  return wrong;
}

/** The body as text when it is textual, else null (ZIP files and images are not scanned for words). */
export async function textOf(res: Response): Promise<string | null> {
  const type = res.headers.get('content-type') ?? '';
  if (!TEXTUAL.test(type) && type !== '') {
    await res.arrayBuffer();
    return null;
  }
  return res.text();
}
