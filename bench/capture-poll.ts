// npm run bench -- capture-poll [--polls 600] [--rounds 3] [--concurrency 6]
// What a client's poll of its running capture costs the service (issue 33): a page follows its capture by
// trickling `completed` every 300 ms, about one poll per analysed frame at six sessions, and each poll is CPU the
// frames' analyses share on the same cores. A real sidecar and Janus (in this process, as the tests run them),
// the service on PGlite with Basic credentials as the camera page's SDK sends them, a capture running on a
// VideoRoom handle with no frames (its events do not move: the poll alone is measured). Per round: `--polls`
// trickles, `--concurrency` at a time, and the CPU they took: this process (main thread and the rest) and Janus,
// per poll. JSON on stdout.
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { adminAuth, basic, bootForTest } from '../test/support/databases.js';
import { startTestSidecar } from '../test/support/sidecar.js';
import { InitParams } from '../src/schemas/gateway-init.js';
import type { CaptureMedia } from '../src/services/capture/capture-types.js';
import { processCpuMs } from './thread-cpu.js';

const option = (args: string[], name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};

/** CPU ms (user + system) of one thread of this process, or of the processes under it whose name starts with `comm`. */
function ticksMs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}
function childrenMs(comm: string): number {
  let ms = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === process.pid && name.startsWith(comm)) ms += ticksMs(`/proc/${entry}/stat`);
    } catch {
      // ended meanwhile
    }
  }
  return ms;
}
const mainMs = () => ticksMs(`/proc/${process.pid}/task/${process.pid}/stat`);

export async function run(args: string[]) {
  const polls = option(args, 'polls', 600);
  const rounds = option(args, 'rounds', 3);
  const concurrency = option(args, 'concurrency', 6);
  const sidecar = await startTestSidecar();
  const service = await bootForTest('pglite', sidecar.env);
  try {
    const call = async (method: string, path: string, authorization: string, body?: unknown) => {
      const res = await service.app.request(path, {
        method,
        headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const made = await call('POST', '/admin/accounts/create', adminAuth, {
      username: 'poller',
      password: 'poller-password',
      role: 'USER',
    });
    if (made.status !== 201) throw new Error(`account: ${made.status}`);
    const owner = basic('poller', 'poller-password');
    const accountId = (
      await service.services.ctx.db
        .selectFrom('accounts')
        .select('id')
        .where('username', '=', 'poller')
        .executeTakeFirstOrThrow()
    ).id;
    const attached = await call('POST', '/user/gateway/create-and-attach?plugin=janus.plugin.videoroom', owner);
    if (attached.status !== 200) throw new Error(`create-and-attach: ${attached.status}`);
    const ids = { sessionId: attached.body.session_id as number, handleId: attached.body.data.id as number };
    // A camera that never sends a frame: the capture runs (WAITING_MEDIA) for the whole bench.
    const media: CaptureMedia = {
      async *frames(signal) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      },
      release: async () => {},
    };
    const session = await service.services.gateway.captures.start({
      ...ids,
      params: InitParams.parse({ kind: 'FV', purpose: 'CHECK', timeoutSeconds: 600 }),
      starter: {
        services: service.services,
        caller: { principal: { accountId, username: 'poller', role: 'USER', via: 'basic' }, surface: 'user' },
      },
      media,
    });
    const poll = async () => {
      const res = await call('POST', '/user/gateway/trickle', owner, { ...ids, completed: true });
      if (res.status !== 200 || !res.body.capture)
        throw new Error(`trickle: ${res.status} ${JSON.stringify(res.body)}`);
    };
    const burst = async (n: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < n) await poll();
        }),
      );
    };
    await burst(100); // warm: the first poll forwards the end of candidates, the code paths compile
    const out = [];
    for (let r = 0; r < rounds; r++) {
      const [cpu0, main0, janus0, t0] = [processCpuMs(), mainMs(), childrenMs('janus'), performance.now()];
      await burst(polls);
      const [cpu1, main1, janus1, t1] = [processCpuMs(), mainMs(), childrenMs('janus'), performance.now()];
      const per = (ms: number) => Math.round((ms / polls) * 100) / 100;
      out.push({
        polls,
        serviceCpuMsPerPoll: per(cpu1 - cpu0),
        mainThreadCpuMsPerPoll: per(main1 - main0),
        janusCpuMsPerPoll: per(janus1 - janus0),
        wallMsPerPoll: per(t1 - t0),
        load: Math.round(loadavg()[0]! * 100) / 100,
      });
    }
    session.cancel('bench over');
    await session.finished;
    return { what: 'trickle polls of a running capture, CPU per poll', concurrency, rounds: out };
  } finally {
    await service.close();
    await sidecar.stop();
  }
}
