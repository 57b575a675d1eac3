import { GatewayProtocolError, GatewayUnavailableError, JanusApiError } from '../../gateway/errors.js';
import { DomainError, type ErrorCode } from '../errors.js';

/**
 * Janus core error codes (janus/apierror.h) that are the client's doing, and what they mean to our client.
 * Everything else (403 our secret refused, 461-463 plugin failures, 470, 490 ...) is the gateway's fault: 502.
 */
const clientFaults: Record<number, ErrorCode> = {
  405: 'forbidden', // plugin not allowed
  452: 'validation', // missing request
  453: 'validation', // unknown request
  454: 'validation', // invalid JSON
  455: 'validation', // invalid JSON object
  456: 'validation', // missing mandatory element
  457: 'validation', // invalid request path
  458: 'not-found', // no such session
  459: 'not-found', // no such handle
  460: 'not-found', // no such plugin
  464: 'validation', // JSEP of unknown type
  465: 'validation', // invalid SDP
  466: 'validation', // trickle for an unknown stream
  467: 'validation', // element of the wrong type
  468: 'conflict', // session id already in use
  469: 'conflict', // answer without an offer
  471: 'conflict', // WebRTC state forbids the request
  472: 'service-unavailable', // not accepting new sessions
};

/**
 * Turn a gateway client failure into the domain error the client sees: Janus's code and reason travel in
 * `gatewayError`, the failing component in `component`. Other errors pass through unchanged.
 */
export function gatewayDomainError(error: unknown): unknown {
  if (error instanceof JanusApiError) {
    const code: ErrorCode = error.fromPlugin ? 'unprocessable' : (clientFaults[error.code] ?? 'bad-gateway');
    const who = error.fromPlugin ? 'The gateway plugin' : 'The media gateway';
    return new DomainError(code, `${who} answered ${error.code}: ${error.reason}`, {
      gatewayError: { code: error.code, reason: error.reason },
      component: error.fromPlugin ? 'plugin' : 'janus',
    });
  }
  if (error instanceof GatewayUnavailableError) {
    return new DomainError(
      'service-unavailable',
      `The media gateway is unavailable: ${error.message}`,
      {
        component: error.component,
        ...(error.state ? { gatewayState: error.state } : {}),
      },
      error.operatorDetail,
    );
  }
  if (error instanceof GatewayProtocolError) {
    return new DomainError(
      'bad-gateway',
      `The media gateway failed: ${error.message}`,
      { component: error.component },
      error.operatorDetail,
    );
  }
  return error;
}

/** Run a gateway call, translating its failures with {@link gatewayDomainError}. */
export async function mapped<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw gatewayDomainError(error);
  }
}
