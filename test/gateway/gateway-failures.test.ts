import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { ServiceContext } from '../../src/services/context.js';
import { DomainError } from '../../src/services/errors.js';
import { GatewayService } from '../../src/services/gateway/gateway-service.js';
import { createLogger } from '../../src/logger.js';
import { adminAuth, bootForTest } from '../support/databases.js';
import { freePorts } from '../support/ports.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';

/**
 * What happens when the gateway is not there, not answering, or not ours to use; and how sessions are kept
 * alive or let go. A suite of its own because it kills and pauses its Janus.
 */
let sidecar: TestSidecar;
let booted: Awaited<ReturnType<typeof bootForTest>>;

beforeAll(async () => {
  sidecar = await startTestSidecar();
  booted = await bootForTest('pglite', { ...sidecar.env, BIMS_GATEWAY_TIMEOUT_MS: '1000' });
});
afterAll(async () => {
  await booted?.close();
  await sidecar?.stop();
});

async function call(method: 'GET' | 'POST', path: string, body?: unknown) {
  const started = Date.now();
  const res = await booted.app.request(path, {
    method,
    headers: { authorization: adminAuth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: await res.json(), ms: Date.now() - started };
}

/** A gateway service of its own configuration, without an app or a database (it needs neither). */
function serviceWith(env: Record<string, string>): GatewayService {
  const config = loadConfig({ ...sidecar.env, ...env });
  return new GatewayService({ config, log: createLogger('silent') } as ServiceContext);
}

async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

const janusPid = () => sidecar.sidecar.janus.snapshot().pid!;

describe('the sidecar guards its door', () => {
  it('refuses a missing or wrong token and answers the right one', async () => {
    const url = `${sidecar.sidecar.url}/v1/janus`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `Bearer ${'x'.repeat(43)}` } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `Basic ${sidecar.token}` } })).status).toBe(401);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${sidecar.token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      state: 'running',
      janus: { url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/janus$/) },
    });
  });

  it('a wrong token configured in the API is a 502 naming the sidecar', async () => {
    const error = await failure(serviceWith({ BIMS_SIDECAR_TOKEN: 'y'.repeat(40) }).inspect.info());
    expect(error.code).toBe('bad-gateway');
    expect(error.extras.component).toBe('sidecar');
    expect(error.detail).toMatch(/refused our token/);
  });

  it('no sidecar listening, or none configured, is a prompt 503', async () => {
    const [port] = await freePorts(1);
    const started = Date.now();
    const error = await failure(serviceWith({ BIMS_SIDECAR_URL: `http://127.0.0.1:${port}` }).inspect.status());
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error.code).toBe('service-unavailable');
    expect(error.extras.component).toBe('sidecar');

    const config = loadConfig({ BIMS_SIDECAR_URL: sidecar.sidecar.url });
    const unconfigured = new GatewayService({ config, log: createLogger('silent') } as ServiceContext);
    // The configuration to set is for the operator's log, not for the caller.
    const unset = await failure(unconfigured.inspect.status());
    expect(unset.operatorDetail).toMatch(/BIMS_SIDECAR_TOKEN/);
    expect(unset.detail).not.toMatch(/BIMS_/);
  });
});

describe('a Janus that hangs or dies', () => {
  it('a paused Janus is a 503 within the configured timeout, not a hang', async () => {
    const pid = janusPid();
    process.kill(pid, 'SIGSTOP');
    try {
      const res = await call('GET', '/admin/gateway/list-sessions');
      expect(res.status).toBe(503);
      expect(res.json).toMatchObject({
        type: expect.stringMatching(/\/service-unavailable$/),
        component: 'janus-admin',
      });
      expect(res.json.detail).toMatch(/did not answer within 1000 ms/);
      expect(res.ms).toBeLessThan(2500);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect((await call('GET', '/admin/gateway/list-sessions')).status).toBe(200);
  });

  it('a killed Janus is a 503 at once, and the sidecar starts it again', async () => {
    const before = sidecar.sidecar.janus.snapshot();
    process.kill(before.pid!, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const down = await call('POST', '/user/gateway/create');
    expect(down.status).toBe(503);
    expect(down.ms).toBeLessThan(2000);
    expect(down.json.type).toMatch(/\/service-unavailable$/);

    const deadline = Date.now() + 15_000;
    let info = await call('GET', '/admin/gateway/info');
    while (info.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      info = await call('GET', '/admin/gateway/info');
    }
    expect(info.status).toBe(200);
    expect(info.json.supervisor).toMatchObject({
      state: 'running',
      restarts: before.restarts + 1,
      lastError: expect.stringMatching(/SIGKILL/),
    });
    expect(info.json.supervisor.pid).not.toBe(before.pid);
  });
});

describe('keeping sessions alive while in use', () => {
  it("sessions created through us outlive Janus's session timeout; others do not", async () => {
    const { janus } = sidecar.sidecar.janus.snapshot();
    expect((await call('POST', '/admin/gateway/settings', { sessionTimeout: 1 })).json.status.session_timeout).toBe(1);
    try {
      const ours = (await call('POST', '/admin/gateway/create')).json.data.id as number;
      const direct = await fetch(janus.url, {
        method: 'POST',
        body: JSON.stringify({ janus: 'create', transaction: 't', apisecret: janus.apiSecret }),
      });
      const theirs = ((await direct.json()) as { data: { id: number } }).data.id;
      // Janus's watchdog looks every two seconds or so: wait until the session nobody keeps alive is gone.
      const deadline = Date.now() + 12_000;
      let sessions: number[] = [];
      do {
        await new Promise((resolve) => setTimeout(resolve, 500));
        sessions = (await call('GET', '/admin/gateway/list-sessions')).json.sessions;
      } while (sessions.includes(theirs) && Date.now() < deadline);
      expect(sessions).not.toContain(theirs);
      expect(sessions).toContain(ours);
      await call('POST', '/admin/gateway/stop', { sessionId: ours });
    } finally {
      await call('POST', '/admin/gateway/settings', { sessionTimeout: 60 });
    }
  });

  it('a session whose client went quiet with no PeerConnection up is destroyed, and stops counting', async () => {
    const quiet = await bootForTest('pglite', { ...sidecar.env, BIMS_GATEWAY_IDLE_SECONDS: '1' });
    try {
      const made = await quiet.app.request('/user/gateway/create', {
        method: 'POST',
        headers: { authorization: adminAuth },
      });
      const sessionId = ((await made.json()) as { data: { id: number } }).data.id;
      expect((await call('GET', '/admin/gateway/list-sessions')).json.sessions).toContain(sessionId);
      const rows = () => quiet.services.ctx.db.selectFrom('gateway_sessions').select('session_id').execute();
      expect((await rows()).map((r) => Number(r.session_id))).toEqual([sessionId]);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect((await call('GET', '/admin/gateway/list-sessions')).json.sessions).not.toContain(sessionId);
      expect(await rows()).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
});
