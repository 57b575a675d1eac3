/**
 * Domain errors: what went wrong in the terms of the rules, with no HTTP in sight. The HTTP layer maps each
 * code to a status and a problem type through one table (src/http/problem.ts).
 */
const errorCodes = [
  'validation',
  'not-found',
  'route-not-found',
  'method-not-allowed',
  'unauthorized',
  'forbidden',
  'conflict',
  'payload-too-large',
  'unsupported-media-type',
  'unprocessable',
  'too-many-requests',
  'service-unavailable',
  'bad-gateway',
  'licence-expired',
  'licence-exhausted',
  'licence-invalid',
  'internal',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/** One offending field of a request, as reported in a validation problem. */
export interface FieldError {
  /** Where the field is: `body`, `query`, `path` or `header`, then a dotted path, e.g. `body.faces.0.image`. */
  field: string;
  message: string;
}

/**
 * A failure the client can act on. `detail` is shown to the client, so it must never carry secrets, server
 * paths or instructions meant for the operator (commands to run, configuration to set): those go in
 * `operatorDetail`, which the HTTP layer writes to the log and never sends.
 */
export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: { errors?: FieldError[]; [key: string]: unknown } = {},
    readonly operatorDetail?: string,
  ) {
    super(detail);
  }
}

export const notFound = (what: string) => new DomainError('not-found', `${what} was not found`);
export const conflict = (detail: string) => new DomainError('conflict', detail);
export const invalid = (field: string, message: string) =>
  new DomainError('validation', `${field}: ${message}`, { errors: [{ field, message }] });
