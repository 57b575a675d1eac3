/**
 * What can go wrong between the API and the media gateway, in the client's own terms; the gateway service
 * maps these to problem types. Kept apart from HTTP so the clients stay plain fetch code.
 */

/** Which component failed: the sidecar that supervises Janus, or Janus itself. */
export type GatewayComponent = 'sidecar' | 'janus' | 'janus-admin';

/** The component could not be reached in time (refused, reset, timed out) or says it is not running. */
export class GatewayUnavailableError extends Error {
  override name = 'GatewayUnavailableError';
  /** `operatorDetail`: what only the operator should read (configuration to set, Janus's own failure); logged, never sent. */
  constructor(
    readonly component: GatewayComponent,
    message: string,
    readonly state?: string,
    readonly operatorDetail?: string,
  ) {
    super(message);
  }
}

/** The component answered, but not as its protocol says (refused our credentials, sent no JSON, ...). */
export class GatewayProtocolError extends Error {
  override name = 'GatewayProtocolError';
  constructor(
    readonly component: GatewayComponent,
    message: string,
    readonly status?: number,
    readonly operatorDetail?: string,
  ) {
    super(message);
  }
}

/** Janus answered `{"janus": "error", "error": {code, reason}}`, or a plugin reported an error in its data. */
export class JanusApiError extends Error {
  override name = 'JanusApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    readonly answer: Record<string, unknown>,
    /** True when the error came from the plugin (its `error_code`) rather than from the Janus core. */
    readonly fromPlugin = false,
  ) {
    super(`${code} ${reason}`);
  }
}
