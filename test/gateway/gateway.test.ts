import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';

/** The media gateway operations (seed 4.7) against a real Janus started by the sidecar for this suite. */
let sidecar: TestSidecar;
let booted: Awaited<ReturnType<typeof bootForTest>>;

beforeAll(async () => {
  sidecar = await startTestSidecar();
  booted = await bootForTest('pglite', sidecar.env);
});
afterAll(async () => {
  await booted?.close();
  await sidecar?.stop();
});

async function call(method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await booted.app.request(path, {
    method,
    headers: { authorization: adminAuth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    text,
    json: text ? JSON.parse(text) : null,
  };
}

const sessions = async () => (await call('GET', '/admin/gateway/list-sessions')).json.sessions as number[];

describe('sessions and handles', () => {
  it('create makes a session that list-sessions shows and stop destroys', async () => {
    const created = await call('POST', '/admin/gateway/create');
    expect(created.status, created.text).toBe(200);
    expect(created.json).toMatchObject({ janus: 'success', data: { id: expect.any(Number) } });
    const sessionId = created.json.data.id;
    expect(await sessions()).toContain(sessionId);

    const attached = await call('POST', '/user/gateway/attach', { sessionId });
    expect(attached.status, attached.text).toBe(200);
    expect(attached.json).toMatchObject({ janus: 'success', session_id: sessionId, data: { id: expect.any(Number) } });

    const stopped = await call('POST', '/user/gateway/stop', { sessionId });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.json).toMatchObject({ janus: 'success', session_id: sessionId });
    expect(await sessions()).not.toContain(sessionId);
  });

  it('createAndAttach attaches the echo test by default; session, session-raw and stop with the handle', async () => {
    const both = await call('POST', '/gateway/create-and-attach');
    expect(both.status, both.text).toBe(200);
    const sessionId = both.json.session_id;
    const handleId = both.json.data.id;
    expect(sessionId).toEqual(expect.any(Number));
    expect(handleId).toEqual(expect.any(Number));

    const session = await call('GET', `/admin/gateway/session?sessionId=${sessionId}`);
    expect(session.status, session.text).toBe(200);
    expect(session.json).toMatchObject({
      janus: 'success',
      session_id: sessionId,
      handles: [handleId],
      events: [],
      liveHandles: [],
    });

    const raw = await call('GET', `/gateway/session-raw?sessionId=${sessionId}&handleId=${handleId}`);
    expect(raw.status, raw.text).toBe(200);
    expect(raw.json).toMatchObject({
      janus: 'success',
      session_id: sessionId,
      handle_id: handleId,
      info: { plugin: 'janus.plugin.echotest' },
    });
    expect(raw.json.events).toBeUndefined();

    const stopped = await call('POST', '/admin/gateway/stop', { sessionId, handleId });
    expect(stopped.status, stopped.text).toBe(200);
    expect(await sessions()).not.toContain(sessionId);
  });

  it('a plugin can be named per request; an unknown one is a 404 carrying the gateway code', async () => {
    const both = await call('POST', '/admin/gateway/create-and-attach?plugin=janus.plugin.echotest');
    expect(both.status, both.text).toBe(200);
    const sessionId = both.json.session_id;
    const unknown = await call('POST', '/admin/gateway/attach?plugin=janus.plugin.nope', { sessionId });
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.type).toMatch(/^application\/problem\+json/);
    expect(unknown.json).toMatchObject({
      type: expect.stringMatching(/\/not-found$/),
      gatewayError: { code: 460, reason: expect.stringContaining('janus.plugin.nope') },
    });
    await call('POST', '/admin/gateway/stop', { sessionId });
  });

  it("connect with an SDP Janus cannot parse is the client's fault (400 with the gateway code)", async () => {
    const both = await call('POST', '/admin/gateway/create-and-attach');
    const {
      session_id: sessionId,
      data: { id: handleId },
    } = both.json;
    const bad = await call('POST', '/admin/gateway/connect', {
      sessionId,
      handleId,
      jsep: { type: 'offer', sdp: 'v=0\r\n' },
      params: { kind: 'FV', purpose: 'CHECK' },
    });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.json.gatewayError.code).toBe(465);
    await call('POST', '/admin/gateway/stop', { sessionId, handleId });
  });
});

describe('unknown sessions and handles', () => {
  const unknown = 4242424242;
  for (const [method, path, body] of [
    ['GET', `/admin/gateway/session?sessionId=${unknown}`, undefined],
    ['GET', `/admin/gateway/session-raw?sessionId=${unknown}`, undefined],
    ['POST', '/admin/gateway/attach', { sessionId: unknown }],
    ['POST', '/admin/gateway/stop', { sessionId: unknown }],
    ['POST', '/admin/gateway/trickle', { sessionId: unknown, handleId: 1, completed: true }],
  ] as const) {
    it(`${method} ${path.split('?')[0]} answers 404 with Janus's 458`, async () => {
      const res = await call(method, path, body);
      expect(res.status, res.text).toBe(404);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.json).toMatchObject({
        status: 404,
        gatewayError: { code: 458, reason: `No such session ${unknown}` },
      });
    });
  }

  it("an unknown handle of a live session is a 404 with Janus's 459", async () => {
    const created = await call('POST', '/admin/gateway/create');
    const sessionId = created.json.data.id;
    const res = await call('GET', `/admin/gateway/session-raw?sessionId=${sessionId}&handleId=99`);
    expect(res.status, res.text).toBe(404);
    expect(res.json.gatewayError.code).toBe(459);
    await call('POST', '/admin/gateway/stop', { sessionId });
  });
});

describe('server information and settings', () => {
  it('info describes Janus and its supervision, never the secrets', async () => {
    const res = await call('GET', '/admin/gateway/info');
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      janus: 'server_info',
      version_string: expect.any(String),
      supervisor: { state: 'running', restarts: 0 },
    });
    expect(Object.keys(res.json.plugins).sort()).toEqual(['janus.plugin.echotest', 'janus.plugin.videoroom']);
    expect(Object.keys(res.json.transports)).toEqual(['janus.transport.http']);
    const { apiSecret, adminSecret } = sidecar.sidecar.janus.snapshot().janus;
    expect(res.text).not.toContain(apiSecret);
    expect(res.text).not.toContain(adminSecret);
  });

  it('get-status reports the run-time settings; settings changes them', async () => {
    const before = await call('GET', '/gateway/get-status');
    expect(before.status, before.text).toBe(200);
    expect(before.json).toMatchObject({
      janus: 'success',
      status: { session_timeout: 60, log_level: expect.any(Number) },
    });

    const changed = await call('POST', '/admin/gateway/settings', {
      logLevel: 5,
      noMediaTimer: 2,
      slowlinkThreshold: 4,
      libniceDebug: false,
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.status).toMatchObject({
      log_level: 5,
      no_media_timer: 2,
      slowlink_threshold: 4,
      libnice_debug: false,
    });

    const restored = await call('POST', '/gateway/settings', {
      logLevel: before.json.status.log_level,
      noMediaTimer: 1,
      slowlinkThreshold: 0,
    });
    expect(restored.json.status).toMatchObject({ log_level: before.json.status.log_level, no_media_timer: 1 });
  });

  it('validates input before reaching the gateway', async () => {
    for (const [method, path, body, field] of [
      ['POST', '/admin/gateway/trickle', { sessionId: 1, handleId: 2 }, /exactly one of candidate/],
      [
        'POST',
        '/admin/gateway/connect',
        { sessionId: 1, handleId: 2, jsep: { type: 'offer', sdp: 'v=0' }, params: { kind: 'XX' } },
        /body\.params/,
      ],
      ['GET', '/admin/gateway/session', undefined, /query\.sessionId/],
      ['POST', '/admin/gateway/settings', { logLevel: 9 }, /body\.logLevel/],
      ['POST', '/admin/gateway/create-and-attach?plugin=Bad/Plugin', undefined, /query\.plugin/],
    ] as const) {
      const res = await call(method, path, body);
      expect(res.status, `${path}: ${res.text}`).toBe(400);
      expect(res.text).toMatch(field);
    }
  });
});

describe('whose session, on one node', () => {
  it("a session's row goes with it; rows of sessions Janus no longer has are pruned, living ones kept", async () => {
    const db = booted.services.ctx.db;
    const created = await call('POST', '/admin/gateway/create');
    const sessionId = created.json.data.id as number;
    const rowOf = (id: number) =>
      db.selectFrom('gateway_sessions').selectAll().where('session_id', '=', id).executeTakeFirst();
    expect(await rowOf(sessionId)).toMatchObject({ owner: expect.stringMatching(/^account:\d+$/), handles: 0 });
    // A node that died: its session is gone from Janus (ended at Janus's timeout), its row left behind; old
    // enough to judge, like the living session's row.
    const old = new Date(Date.now() - 10 * 60_000);
    await db
      .insertInto('gateway_sessions')
      .values({ session_id: 4_242_424_243, owner: 'account:999', node_id: 'gone', created_at: old })
      .execute();
    await db.updateTable('gateway_sessions').set({ created_at: old }).where('session_id', '=', sessionId).execute();
    await booted.services.gateway.prune();
    expect(
      await db.selectFrom('gateway_sessions').select('owner').where('owner', '=', 'account:999').execute(),
    ).toEqual([]);
    expect(await rowOf(sessionId)).toBeDefined();
    expect((await call('POST', '/admin/gateway/stop', { sessionId })).status).toBe(200);
    expect(await rowOf(sessionId)).toBeUndefined();
  });
});
