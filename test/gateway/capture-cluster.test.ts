// A capture session read from another node of a cluster on one PostgreSQL database (docs/gateway-capture.md,
// "Across nodes"): node A runs the capture (in this process, its frames fed from a test photo as the decoder
// would hand them over), node B is a real service process on the same database and the same gateway; a third
// node, a real process, starts a capture and is killed in the middle of it.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, ADMIN_PASSWORD, basic, bootForTest } from '../support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { serviceCaller, startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';
import { photo } from '../biometrics/helpers.js';
import { InitParams } from '../../src/schemas/gateway-init.js';
import type { CaptureMedia } from '../../src/services/capture/capture-types.js';
import type { CaptureSession } from '../../src/services/capture/capture-session.js';
import { fakeOffer } from '../support/fake-offer.js';

const describeOnPostgres = process.env.DATABASE_URL ? describe : describe.skip;
const userAuth = basic('capture-user', 'capture-user-password');
const otherAuth = basic('capture-other', 'capture-other-password');

describeOnPostgres('capture sessions across two nodes on one PostgreSQL database', () => {
  let sidecar: TestSidecar;
  let a: Awaited<ReturnType<typeof bootForTest>>;
  let nodeB: ServiceProcess;
  let b: string;
  let userId: number;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    sidecar = await startTestSidecar();
    a = await bootForTest('postgres', sidecar.env, { createExtractor: sharedExtractorFactory() });
    for (const username of ['capture-user', 'capture-other']) {
      const res = await onA('POST', '/admin/accounts/create', adminAuth, {
        username,
        password: `${username}-password`,
        role: 'USER',
      });
      expect(res.status).toBe(201);
    }
    userId = (
      await a.services.ctx.db
        .selectFrom('accounts')
        .select('id')
        .where('username', '=', 'capture-user')
        .executeTakeFirstOrThrow()
    ).id;
    nodeB = startService(
      {
        DATABASE_URL: a.config.DATABASE_URL!,
        BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
        BIMS_PASSWORD_ITERATIONS: '10000',
        BIMS_LOG_LEVEL: 'info',
        ...sidecar.env,
        // Node B only reads the capture node A runs: no pool (the run's shared service when there is one) nor dashboard.
        ...sharedExtraction(),
        ...NO_DASHBOARD,
      },
      { startupMs: 90_000 },
    );
    b = await nodeB.listening;
  }, 180_000);
  afterAll(async () => {
    for (const child of [nodeB?.child, ...children])
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await nodeB?.exited;
    await a?.close();
    await sidecar?.stop();
    await closeSharedExtractor();
  });

  async function onA(method: string, path: string, authorization: string, body?: unknown) {
    const res = await a.app.request(path, {
      method,
      headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  const onB = (method: string, path: string, authorization: string, body?: unknown) =>
    serviceCaller(authorization)(b, method, path, body);
  const trickleOnB = (authorization: string, ids: { sessionId: number; handleId: number }) =>
    onB('POST', '/user/gateway/trickle', authorization, { ...ids, completed: true });

  /** A gateway session with a VideoRoom handle, made on node A by the user. */
  async function handleOnA() {
    const res = await onA('POST', '/user/gateway/create-and-attach?plugin=janus.plugin.videoroom', userAuth);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { sessionId: res.body.session_id as number, handleId: res.body.data.id as number };
  }

  /** Frames of a photo, held back until `open()`; none ever with `never`. */
  function camera(count: number) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const media: CaptureMedia = {
      async *frames(signal) {
        await Promise.race([
          opened,
          new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
        ]);
        for (let i = 0; i < count && !signal.aborted; i++) yield Buffer.from(photo('labelled/franck/franck_02159.jpg'));
      },
      release: async () => {},
    };
    return { media, open };
  }

  function startOnA(
    ids: { sessionId: number; handleId: number },
    media: CaptureMedia,
    params: Record<string, unknown>,
  ): Promise<CaptureSession> {
    const caller = {
      principal: { accountId: userId, username: 'capture-user', role: 'USER' as const, via: 'basic' as const },
      surface: 'user' as const,
    };
    return a.services.gateway.captures.start({
      ...ids,
      params: InitParams.parse(params),
      starter: { services: a.services, caller },
      media,
    });
  }

  /** Node B's view of the capture, once it says `state` (bounded: the last write may still be on its way). */
  async function onBWhen(ids: { sessionId: number; handleId: number }, state: string) {
    let last: any;
    for (let tries = 0; tries < 200; tries++) {
      last = await trickleOnB(userAuth, ids);
      if (last.status === 200 && last.body.capture?.state === state) return last.body.capture;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`node B never read the capture as ${state}: ${JSON.stringify(last)}`);
  }

  it('node B answers trickle and getSession with the capture node A runs, to the account that started it only', async () => {
    const ids = await handleOnA();
    const { media, open } = camera(2);
    const session = await startOnA(ids, media, {
      kind: 'FV',
      purpose: 'CHECK',
      livenessFrames: 1,
      selectFrames: 1,
      detectLiveness: false,
      timeoutSeconds: 30,
    });

    // Written before the connect would answer: B reads it at once, while it waits for its media.
    const waiting = await trickleOnB(userAuth, ids);
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(200);
    expect(waiting.body.capture).toMatchObject({
      state: 'WAITING_MEDIA',
      purpose: 'CHECK',
      events: [{ type: 'STARTED', purpose: 'CHECK', timeoutSeconds: 30 }],
    });
    const theirs = await trickleOnB(otherAuth, ids);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toContain('STARTED');
    // A trickle to B did not make B poll the session: A still gets its events (B holds no tracker of it).
    const listed = await onB(
      'GET',
      `/admin/gateway/session?sessionId=${ids.sessionId}&handleId=${ids.handleId}`,
      adminAuth,
    );
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(
      listed.body.events
        .filter((e: any) => e.plugindata?.plugin === 'bims.capture')
        .map((e: any) => e.plugindata.data.type),
    ).toEqual(['STARTED']);

    open();
    await session.finished;
    expect(session.state, JSON.stringify(session.result)).toBe('DONE');
    const done = await onBWhen(ids, 'DONE');
    // The same view on both nodes: every event, oldest first, and the outcome with its operation.
    expect(done.events).toEqual(JSON.parse(JSON.stringify(session.events)));
    expect(done.result).toEqual(JSON.parse(JSON.stringify(session.result)));
    expect(done.result).toMatchObject({ status: 'SUCCESS', operationUuid: expect.any(String) });
    const onNodeA = await onA('POST', '/user/gateway/trickle', userAuth, { ...ids, completed: true });
    expect(onNodeA.body.capture).toEqual(done);
    expect((await trickleOnB(otherAuth, ids)).status).toBe(404);

    const info = await onB(
      'GET',
      `/admin/gateway/session?sessionId=${ids.sessionId}&handleId=${ids.handleId}`,
      adminAuth,
    );
    expect(info.status, JSON.stringify(info.body)).toBe(200);
    const captureEvents = info.body.events.filter((e: any) => e.plugindata?.plugin === 'bims.capture');
    expect(captureEvents.map((e: any) => e.plugindata.data)).toEqual(done.events);
    expect(captureEvents.every((e: any) => e.session_id === ids.sessionId && e.sender === ids.handleId)).toBe(true);
    await onA('POST', '/user/gateway/stop', userAuth, ids);
  }, 120_000);

  it("node B reads a running capture's progress from node A within a second of each event, not only at its outcome", async () => {
    const ids = await handleOnA();
    // Frames handed over one at a time, each when the test says.
    let hand: (() => void) | null = null;
    const asked: (() => void)[] = [];
    const media: CaptureMedia = {
      async *frames(signal) {
        while (!signal.aborted) {
          await new Promise<void>((resolve) => {
            hand = resolve;
            for (const tell of asked.splice(0)) tell();
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
          if (!signal.aborted) yield Buffer.from(photo('labelled/franck/franck_02159.jpg'));
        }
      },
      release: async () => {},
    };
    const nextFrame = async () => {
      if (!hand) await new Promise<void>((resolve) => asked.push(resolve));
      const give = hand!;
      hand = null;
      give();
    };
    const session = await startOnA(ids, media, {
      kind: 'FV',
      purpose: 'CHECK',
      livenessFrames: 3,
      selectFrames: 1,
      detectLiveness: true,
      timeoutSeconds: 60,
    });
    // Each frame's progress (FACE_FOUND, accepted 1 and 2), held there: no later event would carry it to the row.
    // A writes it within a second (CaptureWriter's PROGRESS_WRITE_MS); B is given 5 s of polls.
    for (let accepted = 1; accepted <= 2; accepted++) {
      const analysed = session.metrics.framesAnalysed;
      await nextFrame();
      while (session.metrics.framesAnalysed === analysed) await new Promise((resolve) => setTimeout(resolve, 5));
      const event = session.events.at(-1)!;
      expect(event).toMatchObject({ type: 'FACE_FOUND', accepted });
      const seen = await onBWhenEvent(ids, event.at, 'FACE_FOUND');
      expect(seen.state).toBe('CAPTURING');
    }
    await onA('POST', '/user/gateway/stop', userAuth, ids);
    await session.finished;
  }, 120_000);

  /** Node B's view of the capture once it holds the event of `type` stamped `at` (at most 200 polls, 25 ms apart). */
  async function onBWhenEvent(ids: { sessionId: number; handleId: number }, at: string, type: string) {
    let last: any;
    for (let tries = 0; tries < 200; tries++) {
      last = await trickleOnB(userAuth, ids);
      const events: { at: string; type: string }[] = last.body.capture?.events ?? [];
      if (events.some((e) => e.at === at && e.type === type)) return last.body.capture;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`node B never read the ${type} of ${at}: ${JSON.stringify(last)}`);
  }

  it('a stop sent to node B ends the capture node A runs, without an operation', async () => {
    const ids = await handleOnA();
    const { media } = camera(0);
    const session = await startOnA(ids, media, { kind: 'FV', purpose: 'CHECK', timeoutSeconds: 60 });
    const operationsBefore = await a.services.ctx.db
      .selectFrom('operations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();

    const stopped = await onB('POST', '/user/gateway/stop', userAuth, ids);
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    // B settled the row at once; A, which runs it, learns it when its gateway session goes.
    const seen = await trickleOnB(userAuth, ids);
    expect(seen.body.capture).toMatchObject({
      state: 'FAILED',
      result: { status: 'FAILED', reason: 'stopped by the client' },
    });
    await session.finished;
    expect(session.state).toBe('FAILED');
    expect(seen.body.capture.events.at(-1)).toMatchObject({ type: 'FAILED', reason: 'stopped by the client' });
    // The row keeps what B wrote: A's own ending (a moment later) does not overwrite it.
    expect((await trickleOnB(userAuth, ids)).body.capture).toEqual(seen.body.capture);
    const operationsAfter = await a.services.ctx.db
      .selectFrom('operations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(operationsAfter.n)).toBe(Number(operationsBefore.n));
  }, 60_000);

  it('a connect sent to node B for a handle node A made is answered with the JSEP, trial after trial', async () => {
    // Both nodes poll the session (A made it, B is asked to connect), and Janus hands the plugin's answer to one
    // poll only: before the relay (services/gateway/event-relay.ts) B waited 15 s for an answer A had taken, and
    // answered 502 (6 of 6 trials without the relay).
    const trials = 6;
    const failures: string[] = [];
    for (let i = 0; i < trials; i++) {
      const ids = await handleOnA();
      const res = await onB('POST', '/user/gateway/connect', userAuth, {
        ...ids,
        jsep: fakeOffer(),
        params: { kind: 'FV', purpose: 'CHECK', timeoutSeconds: 30 },
      });
      if (res.status !== 200 || res.body.jsep?.type !== 'answer')
        failures.push(`${res.status} ${JSON.stringify(res.body)}`);
      await onB('POST', '/user/gateway/stop', userAuth, ids);
    }
    expect(failures, failures.join('\n')).toEqual([]);
  }, 180_000);

  it("a capture whose node was killed ends FAILED with NODE_LOST once past its deadline, and not before; a living node's is left alone", async () => {
    const operationCount = async () =>
      Number(
        (
          await a.services.ctx.db
            .selectFrom('operations')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const operationsBefore = await operationCount();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '..', 'support', 'capture-node.ts')],
      {
        env: {
          PATH: process.env.PATH!,
          HOME: process.env.HOME ?? '/tmp',
          DATABASE_URL: a.config.DATABASE_URL!,
          BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
          BIMS_PASSWORD_ITERATIONS: '10000',
          ...sidecar.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let output = '';
    const started = await new Promise<{ sessionId: number; handleId: number; nodeId: string }>((resolve, reject) => {
      child.stdout!.on('data', (chunk) => {
        output += chunk;
        const line = output.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line));
      });
      child.stderr!.on('data', (chunk) => (output += chunk));
      child.on('exit', (code) =>
        reject(new Error(`the capture node exited (${code}) before its capture started:\n${output.slice(-2000)}`)),
      );
    });
    const ids = { sessionId: started.sessionId, handleId: started.handleId };
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    const db = a.services.ctx.db;
    const admin = serviceCaller(adminAuth);
    const read = async () =>
      (await admin(b, 'POST', '/admin/gateway/trickle', { ...ids, completed: true })).body.capture;
    // Killed, but within its timeout (and the margin): it may yet be running, as far as anyone can tell.
    const before = await db
      .selectFrom('capture_sessions')
      .selectAll()
      .where('session_id', '=', ids.sessionId)
      .executeTakeFirstOrThrow();
    expect(before).toMatchObject({ node_id: started.nodeId, state: 'WAITING_MEDIA', finished_at: null });
    expect(await read()).toMatchObject({ state: 'WAITING_MEDIA', events: [{ type: 'STARTED' }] });

    // Time passes (moved in the rows rather than waited for): the deadline is behind, the dead node's
    // heartbeat is older than NODE_ALIVE_SECONDS.
    await db
      .updateTable('capture_sessions')
      .set({ deadline_at: new Date(Date.now() - 1000) })
      .where('session_id', '=', ids.sessionId)
      .execute();
    await db
      .updateTable('service_nodes')
      .set({ last_seen_at: new Date(Date.now() - 10 * 60_000) })
      .where('node_id', '=', started.nodeId)
      .execute();
    const lost = await read();
    expect(lost).toMatchObject({
      state: 'FAILED',
      purpose: 'CHECK',
      result: { status: 'FAILED', reason: 'NODE_LOST' },
    });
    expect(lost.events.map((e: any) => e.type)).toEqual(['STARTED', 'FAILED']);
    // Every node reads the same now: the row was settled, not just answered.
    const onNodeA = await onA('POST', '/admin/gateway/trickle', adminAuth, { ...ids, completed: true });
    expect(onNodeA.body.capture).toEqual(lost);
    // No operation: the node died before any ran, and the readers record none.
    expect(await operationCount()).toBe(operationsBefore);

    // A capture of a living node (A reports in) past its deadline is not declared lost.
    const live = await handleOnA();
    const session = await startOnA(live, camera(0).media, { kind: 'FV', purpose: 'CHECK', timeoutSeconds: 60 });
    await db
      .updateTable('capture_sessions')
      .set({ deadline_at: new Date(Date.now() - 1000) })
      .where('session_id', '=', live.sessionId)
      .execute();
    expect((await trickleOnB(userAuth, live)).body.capture).toMatchObject({ state: 'WAITING_MEDIA' });
    await onA('POST', '/user/gateway/stop', userAuth, live);
    await session.finished;
  }, 120_000);
});
