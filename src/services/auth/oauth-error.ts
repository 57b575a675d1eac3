/**
 * OAuth 2.0 errors (RFC 6749 sections 4.1.2.1 and 5.2). They are not {@link DomainError}s because OAuth
 * clients expect `{error, error_description}` JSON (or redirect parameters), not problem+json, and their
 * codes are a fixed vocabulary that generic client libraries act on.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable';

/** RFC 6749 5.2: everything is 400 except a failed client authentication (401). */
const statusOf = (code: OAuthErrorCode): 400 | 401 => (code === 'invalid_client' ? 401 : 400);

export class OAuthError extends Error {
  override name = 'OAuthError';
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly options: {
      /** HTTP status; 429 when the login throttle refuses an attempt, 415 for a body of an undeclared media type. */
      status?: 400 | 401 | 415 | 429;
      /** The client tried HTTP Basic: RFC 6749 5.2 then requires a `WWW-Authenticate` challenge. */
      basicChallenge?: boolean;
      retryAfterSeconds?: number;
    } = {},
  ) {
    super(`${error}: ${description}`);
  }

  get status(): 400 | 401 | 415 | 429 {
    return this.options.status ?? statusOf(this.error);
  }

  /** The RFC 6749 5.2 body. */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description);
export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);
