import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { NO_SIDECAR_ENV } from '../support/external-ops.js';

/**
 * The init params of a capture session are judged before anything reaches the gateway: this suite runs with
 * no sidecar at all, so a 400 here proves no media (nor any Janus request) was needed to refuse them.
 */
let booted: Awaited<ReturnType<typeof bootForTest>>;
beforeAll(async () => {
  booted = await bootForTest('pglite', NO_SIDECAR_ENV);
});
afterAll(async () => {
  await booted?.close();
});

const offer = { type: 'offer', sdp: 'v=0\r\n' };
async function connect(params: unknown) {
  const res = await booted.app.request('/user/gateway/connect', {
    method: 'POST',
    headers: { authorization: adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId: 1, handleId: 2, jsep: offer, params }),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', json: await res.json() };
}

describe('capture session init params', () => {
  it('refuses with a 400 naming the field, before the gateway is asked', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ kind: 'FV', purpose: 'ENROLL' }, 'body.params.subjectId', /required for ENROLL/],
      [{ kind: 'FV', purpose: 'VERIFY' }, 'body.params.subjectId', /required for VERIFY/],
      [
        { kind: 'FV', purpose: 'IDENTIFY', subjectId: 'someone' },
        'body.params.subjectId',
        /only for ENROLL and VERIFY/,
      ],
      [{ kind: 'MULTIMODAL', purpose: 'CHECK' }, 'body.params.modalities', /faces only/],
      [{ kind: 'FV', purpose: 'CHECK', framesPerSecond: 0 }, 'body.params.framesPerSecond', /./],
      [{ kind: 'FV', purpose: 'CHECK', timeoutSeconds: 601 }, 'body.params.timeoutSeconds', /./],
      [{ kind: 'FV', purpose: 'CHECK', overrides: {} }, 'body.params.overrides', /./],
      [
        { kind: 'FV_ADVANCED', purpose: 'CHECK', overrides: { 'quality.face.minimum': 101 } },
        'body.params.overrides.quality.face.minimum',
        /./,
      ],
      [
        { kind: 'FV_ADVANCED', purpose: 'CHECK', overrides: { 'faces.allowMultiple': true } },
        'body.params.overrides',
        /faces\.allowMultiple/,
      ],
      [{ kind: 'FV', purpose: 'DELETE' }, 'body.params.purpose', /./],
      [
        { kind: 'FV', purpose: 'CHECK', activeLiveness: { challenges: 4 } },
        'body.params.activeLiveness.challenges',
        /./,
      ],
      [{ kind: 'FV', purpose: 'CHECK', activeLiveness: { kinds: ['NOD'] } }, 'body.params.activeLiveness.kinds.0', /./],
      [
        { kind: 'FV', purpose: 'CHECK', activeLiveness: { kinds: ['BLINK', 'BLINK'] } },
        'body.params.activeLiveness.kinds',
        /must not repeat/,
      ],
      [
        { kind: 'FV', purpose: 'CHECK', activeLiveness: { challengeSeconds: 2 } },
        'body.params.activeLiveness.challengeSeconds',
        /./,
      ],
      [
        { kind: 'FV', purpose: 'CHECK', activeLiveness: { smile: true } },
        'body.params.activeLiveness.smile',
        /not a known field/,
      ],
      [
        { kind: 'MULTIMODAL', purpose: 'ENROLL', subjectId: 'bob', modalities: ['VOICE'], activeLiveness: {} },
        'body.params.activeLiveness',
        /needs the FACE modality/,
      ],
    ];
    for (const [params, field, message] of cases) {
      const res = await connect(params);
      expect(res.status, JSON.stringify(params)).toBe(400);
      expect(res.type).toContain('application/problem+json');
      const error = (res.json.errors as { field: string; message: string }[]).find(
        (e) => e.field === field || (field.endsWith('overrides') && e.field.startsWith(field)),
      );
      expect(error, `${JSON.stringify(params)} -> ${JSON.stringify(res.json.errors)}`).toBeDefined();
      expect(`${error!.field} ${error!.message}`).toMatch(message);
    }
  });

  it('valid params pass validation and come to the session (here: one nobody made, the 404 of an unknown id)', async () => {
    for (const params of [
      { kind: 'FV', purpose: 'ENROLL', subjectId: 'alice' },
      { kind: 'FV', purpose: 'CHECK' },
      {
        kind: 'FV_ADVANCED',
        purpose: 'VERIFY',
        subjectId: 'alice',
        framesPerSecond: 3,
        overrides: { 'liveness.mode': 'PASSIVE', 'liveness.threshold': 40 },
      },
      { kind: 'MULTIMODAL', purpose: 'IDENTIFY', modalities: ['FACE'] },
      { kind: 'FV', purpose: 'CHECK', activeLiveness: {} },
      {
        kind: 'MULTIMODAL',
        purpose: 'VERIFY',
        subjectId: 'alice',
        activeLiveness: { challenges: 3, kinds: ['TURN_LEFT', 'BLINK'], challengeSeconds: 10, retries: 0 },
      },
    ]) {
      const res = await connect(params);
      expect(res.status, JSON.stringify(res.json)).toBe(404);
      expect(res.json.gatewayError).toEqual({ code: 458, reason: 'No such session 1' });
    }
  });
});
