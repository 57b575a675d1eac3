import { describe, expect, it } from 'vitest';
import { GatewayProtocolError, GatewayUnavailableError, JanusApiError } from '../../gateway/errors.js';
import { DomainError } from '../errors.js';
import { gatewayDomainError } from './errors.js';

const mapped = (error: unknown) => gatewayDomainError(error) as DomainError;

describe('gateway failures as domain errors', () => {
  it("keeps Janus's code and reason, and blames the client only for the client's faults", () => {
    const cases: [number, string][] = [
      [458, 'not-found'],
      [459, 'not-found'],
      [460, 'not-found'],
      [465, 'validation'],
      [456, 'validation'],
      [469, 'conflict'],
      [405, 'forbidden'],
      [472, 'service-unavailable'],
      [403, 'bad-gateway'],
      [462, 'bad-gateway'],
      [490, 'bad-gateway'],
    ];
    for (const [code, expected] of cases) {
      const error = mapped(new JanusApiError(code, `reason ${code}`, { janus: 'error' }));
      expect(error.code, String(code)).toBe(expected);
      expect(error.extras.gatewayError).toEqual({ code, reason: `reason ${code}` });
    }
  });

  it('a plugin error is unprocessable; unreachable is 503; a broken answer is 502', () => {
    expect(mapped(new JanusApiError(411, 'bad body', {}, true))).toMatchObject({
      code: 'unprocessable',
      extras: { component: 'plugin' },
    });
    expect(mapped(new GatewayUnavailableError('janus', 'down', 'restarting'))).toMatchObject({
      code: 'service-unavailable',
      extras: { gatewayState: 'restarting' },
    });
    expect(mapped(new GatewayProtocolError('sidecar', 'refused'))).toMatchObject({
      code: 'bad-gateway',
      extras: { component: 'sidecar' },
    });
    const other = new Error('ours');
    expect(gatewayDomainError(other)).toBe(other);
  });
});
