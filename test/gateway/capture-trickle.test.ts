// The poll of a running capture (docs/gateway-capture.md, "Events"): a client follows its capture by trickling
// `completed` about three times a second. The first one goes to Janus (the end of the client's candidates);
// while the capture runs on this node, the repeats are answered from it: no statement, no request to Janus,
// the same answer (the capture's events as they happen), and to another account still the 404 of an unknown
// session. A real sidecar and Janus, the service on PGlite (one node) in this process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, basic, bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';
import { steppedCamera } from '../support/stepped-camera.js';
import { writeGenerationOf } from '../../src/db/write-generation.js';
import { InitParams } from '../../src/schemas/gateway-init.js';

const owner = basic('poller', 'poller-password');
const stranger = basic('stranger', 'stranger-password');

describe('trickle polls of a running capture', () => {
  let sidecar: TestSidecar;
  let a: Awaited<ReturnType<typeof bootForTest>>;
  let ownerId: number;
  /** Janus trickle requests the service sent, by handle: counted on their way, sent all the same. */
  const janusTrickles = new Map<number, number>();
  const realFetch = globalThis.fetch;

  beforeAll(async () => {
    sidecar = await startTestSidecar();
    a = await bootForTest('pglite', sidecar.env, { createExtractor: sharedExtractorFactory() });
    for (const username of ['poller', 'stranger']) {
      const made = await call('POST', '/admin/accounts/create', adminAuth, {
        username,
        password: `${username}-password`,
        role: 'USER',
      });
      expect(made.status).toBe(201);
    }
    ownerId = (
      await a.services.ctx.db
        .selectFrom('accounts')
        .select('id')
        .where('username', '=', 'poller')
        .executeTakeFirstOrThrow()
    ).id;
    globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      if (body.includes('"janus":"trickle"')) {
        const handle = Number(String(input).split('/').at(-1));
        janusTrickles.set(handle, (janusTrickles.get(handle) ?? 0) + 1);
      }
      return realFetch(input, init);
    }) as typeof fetch;
  }, 180_000);
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await a?.close();
    await sidecar?.stop();
    await closeSharedExtractor();
  });

  async function call(method: string, path: string, authorization: string, body?: unknown) {
    const res = await a.app.request(path, {
      method,
      headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  it('forwards the first end of candidates to Janus and answers the repeats from the running capture alone', async () => {
    const made = await call('POST', '/user/gateway/create-and-attach?plugin=janus.plugin.videoroom', owner);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const ids = { sessionId: made.body.session_id as number, handleId: made.body.data.id as number };
    const { media, next } = steppedCamera();
    const session = await a.services.gateway.captures.start({
      ...ids,
      params: InitParams.parse({ kind: 'FV', purpose: 'CHECK', livenessFrames: 3, timeoutSeconds: 60 }),
      starter: {
        services: a.services,
        caller: {
          principal: { accountId: ownerId, username: 'poller', role: 'USER', via: 'basic' },
          surface: 'user',
        },
      },
      media,
    });
    const writes = writeGenerationOf(a.services.ctx.db)!;
    const poll = (authorization = owner) =>
      call('POST', '/user/gateway/trickle', authorization, { ...ids, completed: true });

    const first = await poll();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.capture.events.map((e: any) => e.type)).toEqual(['STARTED']);
    expect(janusTrickles.get(ids.handleId)).toBe(1);

    // The repeats: the same answer, with the events as they happen, and neither a statement nor a request.
    const before = writes.statements;
    const polls = [];
    for (let i = 0; i < 10; i++) polls.push(await poll());
    const statements = writes.statements - before;
    await next();
    for (let t = 0; t < 30_000 && session.metrics.framesAnalysed === 0; t += 5)
      await new Promise((resolve) => setTimeout(resolve, 5));
    polls.push(await poll());
    for (const p of polls) {
      expect(p.status).toBe(200);
      expect(p.body).toMatchObject({ janus: 'ack', session_id: ids.sessionId, sender: ids.handleId });
    }
    expect(polls[0]!.body.capture).toEqual(first.body.capture);
    // The frame's events show in the polls after it, as the capture holds them (its row is written later).
    const last = polls.at(-1)!.body.capture;
    expect(last.events.map((e: any) => e.type)).toEqual(expect.arrayContaining(['STARTED', 'MEDIA']));
    expect(last.events).toEqual(JSON.parse(JSON.stringify(session.events)).slice(0, last.events.length));
    expect(last.state).toBe('CAPTURING');
    expect(janusTrickles.get(ids.handleId)).toBe(1);
    expect(statements).toBe(0);

    // Another account: the 404 of an unknown session, as before the first poll, and nothing forwarded for it.
    const theirs = await poll(stranger);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toContain('STARTED');
    expect(janusTrickles.get(ids.handleId)).toBe(1);

    // A candidate is the client's to hand to Janus, whatever the capture.
    const candidate = await call('POST', '/user/gateway/trickle', owner, {
      ...ids,
      candidate: { candidate: 'candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host', sdpMid: '0', sdpMLineIndex: 0 },
    });
    expect(candidate.status, JSON.stringify(candidate.body)).toBe(200);
    expect(candidate.body.capture.state).toBe('CAPTURING');
    expect(janusTrickles.get(ids.handleId)).toBe(2);

    // Over: the outcome alone, as for any finished capture.
    const stopped = await call('POST', '/user/gateway/stop', owner, ids);
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    await session.finished;
    const after = await poll();
    expect(after.status).toBe(200);
    expect(after.body.capture.events.at(-1)).toMatchObject({ type: 'FAILED', reason: 'stopped by the client' });
    expect(janusTrickles.get(ids.handleId)).toBe(2);
  }, 120_000);

  it('still forwards every poll of a handle with no capture on it', async () => {
    const made = await call('POST', '/user/gateway/create-and-attach?plugin=janus.plugin.videoroom', owner);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const ids = { sessionId: made.body.session_id as number, handleId: made.body.data.id as number };
    for (let i = 0; i < 3; i++) {
      const res = await call('POST', '/user/gateway/trickle', owner, { ...ids, completed: true });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.capture).toBeUndefined();
    }
    expect(janusTrickles.get(ids.handleId)).toBe(3);
    await call('POST', '/user/gateway/stop', owner, ids);
  }, 60_000);
});
