import type { OperationSpec, ProblemStatus } from '../operations/types.js';
import { PROBLEM_BASE, problemTable } from './problem.js';
import type { ErrorCode } from '../services/errors.js';

/**
 * The problem answers of one operation, derived from its table entry so no description has to list them by
 * hand: the ones every operation can give, the ones its credentials and body bring, and the ones it
 * declares (`problems`). Each names the problem types it carries.
 */
export function problemAnswersOf(
  spec: OperationSpec,
): Partial<Record<ProblemStatus, { description: string; types: string[] }>> {
  const answers: Partial<Record<ProblemStatus, string>> = {
    400: 'Invalid request (problem+json naming the fields in `errors`)',
    404: 'Not found',
    500: 'Internal error, recorded in the exception log (`exceptionId`)',
  };
  if (!spec.open) {
    answers[401] = 'Missing or bad credentials (WWW-Authenticate: Basic and Bearer)';
    answers[403] = 'Credentials lack the scope (WWW-Authenticate: Bearer error="insufficient_scope")';
    answers[429] = 'Too many failed sign-ins from this address or for this account (Basic); retry after Retry-After';
  }
  if (spec.request?.body) {
    answers[413] = 'Request body over BIMS_MAX_BODY_BYTES';
    answers[415] = `The body is not ${spec.request.bodyContentType ?? 'application/json'}${spec.request.form ? ' or multipart/form-data' : ''}`;
  }
  if (spec.component) {
    answers[502] = `${spec.component} failed or answered out of turn`;
    answers[503] = `${spec.component} cannot be reached now`;
  }
  Object.assign(answers, spec.problems);
  const out: Partial<Record<ProblemStatus, { description: string; types: string[] }>> = {};
  for (const [status, description] of Object.entries(answers) as [string, string][]) {
    out[Number(status) as ProblemStatus] = { description, types: typesOf(Number(status), spec) };
  }
  return out;
}

/** Codes a status stands for on an operation; `route-not-found` is no operation's answer. */
function typesOf(status: number, spec: OperationSpec): string[] {
  const codes = (Object.entries(problemTable) as [ErrorCode, { status: number }][])
    .filter(([code, entry]) => entry.status === status && code !== 'route-not-found')
    .map(([code]) => code)
    .filter((code) => !code.startsWith('licence-') || spec.licensed === true);
  return codes.map((code) => `${PROBLEM_BASE}/${code}`);
}
