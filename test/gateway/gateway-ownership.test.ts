// The accounts of the media gateway on two real service processes over one PostgreSQL database and one gateway
// (a real sidecar and Janus), one boot for both parts:
// - Whose session (issue 32, point 2): every gateway session and handle belongs to the account that made it;
//   sessions made through one node are tried by another account through both. What another account sends about
//   a session must answer exactly what an unknown id answers (no oracle), leave the session and its capture as
//   they were, and ADMIN on /admin may still act on any session.
// - The fair share (point 7): one account floods create-and-attach through both nodes (more calls than the
//   whole service's capacity), then asks for more captures than its share, while another account creates its
//   session and starts a capture. The caps are counted in the database, so the two nodes together admit exactly
//   one account's share; a per-node count would admit twice as many.
import { readdirSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ADMIN_PASSWORD, adminAuth, basic, freshPostgres } from '../support/databases.js';
import { fakeOffer } from '../support/fake-offer.js';
import { serviceCaller, startService, type ServiceProcess } from '../support/service-process.js';
import { NO_DASHBOARD, sharedExtraction } from '../support/shared-extraction.js';
import { startTestSidecar, type TestSidecar } from '../support/sidecar.js';

const userA = basic('owner-a', 'owner-a-password');
const userB = basic('owner-b', 'owner-b-password');
const admin2 = basic('admin-two', 'admin-two-password');
const TRIALS = 3;
const UNKNOWN = 4_242_424_242;
const attacker = basic('flooder', 'flooder-password');
const victim = basic('bystander', 'bystander-password');
const defaults = loadConfig({});
const SESSIONS_PER_ACCOUNT = defaults.BIMS_GATEWAY_SESSIONS_PER_ACCOUNT;
const CAPTURES_PER_ACCOUNT = defaults.BIMS_CAPTURES_PER_ACCOUNT;
/** More create-and-attach calls per round than the whole service holds sessions. */
const FLOOD = defaults.BIMS_GATEWAY_SESSIONS_TOTAL + 32;
const AT_ONCE = 16;
const ROUNDS = 2;

type Call = { status: number; body: any };
type Ids = { sessionId: number; handleId: number };

describe.skipIf(!process.env.DATABASE_URL)('gateway sessions across two nodes: whose, and how many', () => {
  let sidecar: TestSidecar;
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  const nodes: ServiceProcess[] = [];
  let urls: string[] = [];

  beforeAll(async () => {
    sidecar = await startTestSidecar();
    database = await freshPostgres({ migrated: true });
    const env = {
      DATABASE_URL: database.url,
      BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_EXTRACTION_WORKERS: '1',
      ...sidecar.env,
      // Sessions and their caps are under test, not extraction: the run's shared extraction service when there is one.
      ...sharedExtraction(),
      ...NO_DASHBOARD,
    };
    nodes.push(startService(env, { startupMs: 90_000 }), startService(env, { startupMs: 90_000 }));
    urls = await Promise.all(nodes.map((n) => n.listening));
    for (const [username, role] of [
      ['owner-a', 'USER'],
      ['owner-b', 'USER'],
      ['admin-two', 'ADMIN'],
      ['flooder', 'USER'],
      ['bystander', 'USER'],
    ] as const) {
      const made = await serviceCaller(adminAuth)(urls[0]!, 'POST', '/admin/accounts/create', {
        username,
        password: `${username}-password`,
        role,
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
    }
  }, 180_000);

  afterAll(async () => {
    for (const node of nodes) {
      node.child.kill('SIGTERM');
      await node.exited;
    }
    await database?.drop();
    await sidecar?.stop();
  });

  const as = (auth: string) => serviceCaller(auth);

  /** A session with a handle on `plugin`, made by `auth` on `prefix` ('/user' or '' for the root surface). */
  async function sessionOf(auth: string, url: string, prefix: string, plugin = 'janus.plugin.echotest'): Promise<Ids> {
    const made = await as(auth)(url, 'POST', `${prefix}/gateway/create-and-attach?plugin=${plugin}`);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    return { sessionId: made.body.session_id, handleId: made.body.data.id };
  }

  /** Every operation that names a session (and a handle) on a surface, as [label, call]. */
  function operations(prefix: string, ids: Ids): [string, (auth: string, url: string) => Promise<Call>][] {
    const ops: [string, (auth: string, url: string) => Promise<Call>][] = [
      ['attach', (a, u) => as(a)(u, 'POST', `${prefix}/gateway/attach`, { sessionId: ids.sessionId })],
      [
        'connect',
        (a, u) =>
          as(a)(u, 'POST', `${prefix}/gateway/connect`, {
            ...ids,
            jsep: fakeOffer(),
            params: { kind: 'FV', purpose: 'CHECK' },
          }),
      ],
      ['trickle', (a, u) => as(a)(u, 'POST', `${prefix}/gateway/trickle`, { ...ids, completed: true })],
      ['stop (handle)', (a, u) => as(a)(u, 'POST', `${prefix}/gateway/stop`, ids)],
      ['stop', (a, u) => as(a)(u, 'POST', `${prefix}/gateway/stop`, { sessionId: ids.sessionId })],
    ];
    if (prefix === '')
      ops.push(
        ['getSession', (a, u) => as(a)(u, 'GET', `/gateway/session?sessionId=${ids.sessionId}`)],
        [
          'getSession (handle)',
          (a, u) => as(a)(u, 'GET', `/gateway/session?sessionId=${ids.sessionId}&handleId=${ids.handleId}`),
        ],
        ['getSessionRaw', (a, u) => as(a)(u, 'GET', `/gateway/session-raw?sessionId=${ids.sessionId}`)],
      );
    return ops;
  }

  /**
   * What the same operation answers for an id nobody holds, with that id written as the one asked about: the
   * answer a stranger's session must give, byte for byte but for the id.
   */
  async function unknownAnswer(label: string, prefix: string, auth: string, url: string, ids: Ids): Promise<Call> {
    const unknown = operations(prefix, { sessionId: UNKNOWN, handleId: ids.handleId }).find(([l]) => l === label)![1];
    const answer = await unknown(auth, url);
    return JSON.parse(JSON.stringify(answer).replaceAll(String(UNKNOWN), String(ids.sessionId)));
  }

  /**
   * Try every operation on `ids` as `intruder` on both nodes, all at once (none may change anything, so their
   * order cannot matter); each answer that is not the unknown id's is a failure.
   */
  async function intrude(prefix: string, intruder: string, ids: Ids, failures: string[]): Promise<void> {
    const tries = [...urls.entries()].flatMap(([n, url]) =>
      operations(prefix, ids).map(async ([label, op]) => {
        const [answer, expected] = await Promise.all([
          op(intruder, url),
          unknownAnswer(label, prefix, intruder, url, ids),
        ]);
        if (answer.status !== 404 || JSON.stringify(answer.body) !== JSON.stringify(expected.body))
          failures.push(`${prefix || 'root'} ${label} on node ${n}: ${answer.status} ${JSON.stringify(answer.body)}`);
      }),
    );
    await Promise.all(tries);
  }

  it(`another account's calls about a session answer as for an unknown id, on /user and the root surface, on both nodes (${TRIALS} trials)`, async () => {
    const failures: string[] = [];
    let tried = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      for (const [prefix, owner, intruder] of [
        ['/user', userA, userB],
        ['', admin2, adminAuth],
      ] as const) {
        const home = urls[trial % 2]!;
        const ids = await sessionOf(owner, home, prefix);
        await intrude(prefix, intruder, ids, failures);
        tried += 2 * operations(prefix, ids).length;
        // The owner's session is as it was: its trickle is acknowledged by Janus on either node.
        for (const url of urls) {
          const own = await as(owner)(url, 'POST', `${prefix}/gateway/trickle`, { ...ids, completed: true });
          if (own.status !== 200 || own.body.janus !== 'ack')
            failures.push(`owner's trickle after the intrusions: ${own.status} ${JSON.stringify(own.body)}`);
        }
        const listed = await as(adminAuth)(urls[1 - (trial % 2)]!, 'GET', '/admin/gateway/list-sessions');
        if (!listed.body.sessions?.includes(ids.sessionId))
          failures.push(`session ${ids.sessionId} is gone from Janus`);
        const stopped = await as(owner)(urls[1 - (trial % 2)]!, 'POST', `${prefix}/gateway/stop`, ids);
        if (stopped.status !== 200) failures.push(`owner's stop: ${stopped.status} ${JSON.stringify(stopped.body)}`);
      }
    }
    expect(failures, `${failures.length} of ${tried} intruding calls were not answered as for an unknown id`).toEqual(
      [],
    );
  }, 120_000);

  it('ADMIN on /admin may act on any session, on either node', async () => {
    const ids = await sessionOf(userA, urls[0]!, '/user');
    const info = await as(adminAuth)(
      urls[1]!,
      'GET',
      `/admin/gateway/session?sessionId=${ids.sessionId}&handleId=${ids.handleId}`,
    );
    expect(info.status, JSON.stringify(info.body)).toBe(200);
    const trickled = await as(adminAuth)(urls[1]!, 'POST', '/admin/gateway/trickle', { ...ids, completed: true });
    expect(trickled.status, JSON.stringify(trickled.body)).toBe(200);
    const stopped = await as(adminAuth)(urls[1]!, 'POST', '/admin/gateway/stop', ids);
    expect(stopped.status, JSON.stringify(stopped.body)).toBe(200);
    const listed = await as(adminAuth)(urls[0]!, 'GET', '/admin/gateway/list-sessions');
    expect(listed.body.sessions).not.toContain(ids.sessionId);
    // Gone for its owner too, on both nodes.
    for (const url of urls)
      expect((await as(userA)(url, 'POST', '/user/gateway/trickle', { ...ids, completed: true })).status).toBe(404);
  }, 60_000);

  it(`during a live capture another account can neither follow, disturb nor stop it, on either node (${TRIALS} trials)`, async () => {
    const failures: string[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const home = urls[trial % 2]!;
      const away = urls[1 - (trial % 2)]!;
      const ids = await sessionOf(userA, home, '/user', 'janus.plugin.videoroom');
      const connected = await as(userA)(home, 'POST', '/user/gateway/connect', {
        ...ids,
        jsep: fakeOffer(),
        params: { kind: 'FV', purpose: 'CHECK', timeoutSeconds: 60 },
      });
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      expect(connected.body.jsep?.type).toBe('answer');
      await intrude('/user', userB, ids, failures);
      // The capture still waits for its media, as its owner reads it on the other node.
      const seen = await as(userA)(away, 'POST', '/user/gateway/trickle', { ...ids, completed: true });
      if (seen.status !== 200 || seen.body.capture?.state !== 'WAITING_MEDIA')
        failures.push(`trial ${trial}: the owner's capture after the intrusions: ${JSON.stringify(seen.body)}`);
      if (JSON.stringify(seen.body).includes('FAILED'))
        failures.push(`trial ${trial}: the capture was ended: ${JSON.stringify(seen.body.capture)}`);
      // ADMIN on /admin stops it from the other node; its owner reads the outcome.
      const stopped = await as(adminAuth)(away, 'POST', '/admin/gateway/stop', ids);
      if (stopped.status !== 200) failures.push(`trial ${trial}: admin's stop ${stopped.status}`);
      const after = await as(adminAuth)(home, 'POST', '/admin/gateway/trickle', { ...ids, completed: true });
      if (after.body.capture?.result?.reason !== 'stopped by the client')
        failures.push(`trial ${trial}: after the admin's stop: ${JSON.stringify(after.body)}`);
      // The outcome outlives the gateway session for its owner, on either node; to another account the handle
      // is still an unknown id.
      for (const url of urls) {
        const own = await as(userA)(url, 'POST', '/user/gateway/trickle', { ...ids, completed: true });
        if (own.body.capture?.state !== 'FAILED') failures.push(`trial ${trial}: owner after stop: ${own.status}`);
        const theirs = await as(userB)(url, 'POST', '/user/gateway/trickle', { ...ids, completed: true });
        const expected = await unknownAnswer('trickle', '/user', userB, url, ids);
        if (JSON.stringify(theirs.body) !== JSON.stringify(expected.body))
          failures.push(`trial ${trial}: another account after stop: ${theirs.status} ${JSON.stringify(theirs.body)}`);
      }
    }
    expect(failures, `${failures.length} failures`).toEqual([]);
  }, 120_000);

  /** A call with its status, Retry-After and problem type. */
  async function call(auth: string, url: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as any;
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      type: res.headers.get('content-type'),
      json,
    };
  }
  const janusSessions = async () =>
    (await call(adminAuth, urls[0]!, 'GET', '/admin/gateway/list-sessions')).json.sessions as number[];
  /**
   * Janus's open files other than sockets: what its sessions and handles hold (event fds). Its sockets are the
   * nodes' HTTP connections, whose number follows how many calls run at once, not how many sessions there are.
   */
  const janusSessionFiles = () => {
    const dir = `/proc/${sidecar.sidecar.janus.snapshot().pid}/fd`;
    return readdirSync(dir).filter((fd) => {
      try {
        return !readlinkSync(`${dir}/${fd}`).startsWith('socket:');
      } catch {
        return false; // closed while listed
      }
    }).length;
  };

  /** Run `calls` requests, `AT_ONCE` at a time, alternating the two nodes. */
  async function flood<T>(count: number, one: (url: string, i: number) => Promise<T>): Promise<T[]> {
    const out: T[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < count) {
          const i = next++;
          out[i] = await one(urls[i % 2]!, i);
        }
      }),
    );
    return out;
  }

  it(`one account's flood of ${FLOOD} create-and-attach (${AT_ONCE} at once, both nodes) gets its ${SESSIONS_PER_ACCOUNT} sessions and 429s; another account's calls all pass (${ROUNDS} rounds)`, async () => {
    const failures: string[] = [];
    // What one session costs Janus in open files, measured here (the event fds per session and handle vary with
    // Janus's version and how soon a stopped session's files close): the other account's share, opened.
    const filesIdle = janusSessionFiles();
    const probe = await flood(SESSIONS_PER_ACCOUNT, (url) =>
      call(victim, url, 'POST', '/user/gateway/create-and-attach'),
    );
    const filesPerSession = Math.max(1, (janusSessionFiles() - filesIdle) / SESSIONS_PER_ACCOUNT);
    for (const [i, p] of probe.entries())
      await call(victim, urls[i % 2]!, 'POST', '/user/gateway/stop', { sessionId: p.json.session_id });
    const filesBefore = janusSessionFiles();
    let peakFiles = filesBefore;
    for (let round = 0; round < ROUNDS; round++) {
      // The other account works meanwhile, as one client does: a session made and stopped, one after another
      // (one for every eighth call of the flood). Made from inside the flood's 16 callers, its sessions would
      // overlap past its own share whenever the refusals ran ahead of its stops, and be refused for that.
      const bystander: number[] = [];
      const bystanding = (async () => {
        for (let i = 0; i < FLOOD / 8; i++) {
          const url = urls[i % 2]!;
          const own = await call(victim, url, 'POST', '/user/gateway/create-and-attach');
          bystander.push(own.status);
          if (own.status !== 200) continue;
          const stopped = await call(victim, url, 'POST', '/user/gateway/stop', { sessionId: own.json.session_id });
          if (stopped.status !== 200) bystander.push(stopped.status);
        }
      })();
      const answers = await flood(FLOOD, (url) => call(attacker, url, 'POST', '/user/gateway/create-and-attach'));
      await bystanding;
      peakFiles = Math.max(peakFiles, janusSessionFiles());
      const admitted = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429);
      if (admitted.length !== SESSIONS_PER_ACCOUNT)
        failures.push(`round ${round}: ${admitted.length} sessions admitted, not ${SESSIONS_PER_ACCOUNT}`);
      if (refused.length !== FLOOD - SESSIONS_PER_ACCOUNT)
        failures.push(
          `round ${round}: ${refused.length} refused; others: ${JSON.stringify(answers.filter((a) => a.status !== 200 && a.status !== 429).slice(0, 3))}`,
        );
      for (const r of refused.slice(0, 5))
        if (
          r.retryAfter !== '10' ||
          !r.type?.startsWith('application/problem+json') ||
          !String(r.json.type).endsWith('/too-many-requests')
        )
          failures.push(`round ${round}: a refusal as ${JSON.stringify(r)}`);
      if (bystander.some((s) => s !== 200)) failures.push(`round ${round}: the other account got ${bystander}`);
      const live = new Set(await janusSessions());
      if (admitted.filter((a) => live.has(a.json.session_id)).length !== SESSIONS_PER_ACCOUNT)
        failures.push(`round ${round}: the admitted sessions are not all in Janus`);
      // Stopped, they give their places back for the next round.
      for (const [i, a] of admitted.entries())
        await call(attacker, urls[i % 2]!, 'POST', '/user/gateway/stop', { sessionId: a.json.session_id });
    }
    expect(failures, `${failures.length} failures: ${failures.join('; ')}`).toEqual([]);
    // The flood never reached Janus: its open files grew by about the share's sessions (twice that, for the
    // other account's sessions and stopped ones whose files are not closed yet), not by the flood's hundreds.
    expect(probe.map((p) => p.status)).toEqual(Array(SESSIONS_PER_ACCOUNT).fill(200));
    expect(peakFiles - filesBefore).toBeLessThan(2 * SESSIONS_PER_ACCOUNT * filesPerSession);
  }, 180_000);

  it(`one account asking for more captures than its share gets ${CAPTURES_PER_ACCOUNT} and 429s, while another account starts one`, async () => {
    const handles: Ids[] = await flood(SESSIONS_PER_ACCOUNT, async (url) => {
      const made = await call(attacker, url, 'POST', '/user/gateway/create-and-attach?plugin=janus.plugin.videoroom');
      expect(made.status, JSON.stringify(made.json)).toBe(200);
      return { sessionId: made.json.session_id, handleId: made.json.data.id };
    });
    // One more session than the share is refused, as in the flood.
    const over = await call(
      attacker,
      urls[1]!,
      'POST',
      '/user/gateway/create-and-attach?plugin=janus.plugin.videoroom',
    );
    expect(over.status).toBe(429);
    const connect = (auth: string, url: string, ids: Ids) =>
      call(auth, url, 'POST', '/user/gateway/connect', {
        ...ids,
        jsep: fakeOffer(),
        params: { kind: 'FV', purpose: 'CHECK', timeoutSeconds: 120 },
      });
    const captures = await flood(handles.length, (url, i) => connect(attacker, url, handles[i]!));
    expect(captures.map((c) => c.status).sort()).toEqual([
      ...Array(CAPTURES_PER_ACCOUNT).fill(200),
      ...Array(handles.length - CAPTURES_PER_ACCOUNT).fill(429),
    ]);
    const refused = captures.find((c) => c.status === 429)!;
    expect(refused.retryAfter).toBe('10');
    expect(refused.json.detail).toMatch(/holds 4 captures, as many as it may at once/);

    // The other account: its session and its capture (connected where the session was made, whose node polls
    // it), followed from the other node.
    const made = await call(victim, urls[1]!, 'POST', '/user/gateway/create-and-attach?plugin=janus.plugin.videoroom');
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    const ids = { sessionId: made.json.session_id, handleId: made.json.data.id };
    const started = await connect(victim, urls[1]!, ids);
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    expect(started.json.jsep.type).toBe('answer');
    const seen = await call(victim, urls[0]!, 'POST', '/user/gateway/trickle', { ...ids, completed: true });
    expect(seen.json.capture).toMatchObject({ state: 'WAITING_MEDIA', purpose: 'CHECK' });

    // A capture stopped gives its place back to its account.
    const running = handles.filter((_, i) => captures[i]!.status === 200);
    const waitingAt = captures.findIndex((c) => c.status === 429);
    const waiting = handles[waitingAt]!;
    expect((await call(attacker, urls[0]!, 'POST', '/user/gateway/stop', running[0])).status).toBe(200);
    // On a new handle of its session: a VideoRoom handle whose connect was refused after Janus published it (the
    // second count, racing its own connects) is spent.
    const home = urls[waitingAt % 2]!;
    const again = await call(attacker, home, 'POST', '/user/gateway/attach?plugin=janus.plugin.videoroom', {
      sessionId: waiting.sessionId,
    });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    const retried = await connect(attacker, home, { sessionId: waiting.sessionId, handleId: again.json.data.id });
    expect(retried.status, JSON.stringify(retried.json)).toBe(200);
    // Its session now has its two handles: a third is refused.
    const third = await call(attacker, home, 'POST', '/user/gateway/attach', { sessionId: waiting.sessionId });
    expect(third.status, JSON.stringify(third.json)).toBe(429);
    expect(third.json.detail).toMatch(/already has 2 handles/);
    for (const h of [...running.slice(1), waiting, ids])
      await call(h === ids ? victim : attacker, urls[0]!, 'POST', '/user/gateway/stop', h);
  }, 120_000);
});
