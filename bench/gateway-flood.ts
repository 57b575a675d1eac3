// npm run bench -- gateway-flood [--calls N] [--at-once N] [--rounds N] [--baseline DIR]
// What one account's flood of create-and-attach does to the media gateway (issue 32, point 7): a USER issues
// `--calls` (default 1000) create-and-attach, `--at-once` (16) at a time, against a real service process on
// PGlite with a real sidecar and Janus, while another USER makes and stops a session after every 48 of them.
// Prints, per run, the flooder's answers by status, the other account's answers and latencies, the sessions Janus
// holds after the flood and the most open files Janus had during it; and the other account's latency alone,
// before the flood, for a ratio within the run. `--baseline DIR` runs another checkout's
// service the same way (e.g. `git archive ff19605 | tar -x -C .bench-baseline`, a tree inside this one so that it
// finds node_modules), alternated with this one `--rounds` times (default 2), each run on a fresh Janus.
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentiles } from './percentiles.js';
import { startService } from '../test/support/service-process.js';
import { startTestSidecar } from '../test/support/sidecar.js';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

const PASSWORD = 'bench-admin-password';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const admin = basic('admin', PASSWORD);
const flooder = basic('flooder', 'flooder-password');
const bystander = basic('bystander', 'bystander-password');

async function call(url: string, auth: string, method: string, path: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json().catch(() => null)) as any;
  return { status: res.status, ms: performance.now() - started, json };
}

/** One flood against one checkout's service (`root`, or this checkout), on a Janus of its own. */
async function flood(label: string, root: string | undefined, calls: number, atOnce: number) {
  const sidecar = await startTestSidecar();
  const dataDir = await mkdtemp(join(tmpdir(), 'bims-bench-flood-'));
  const service = startService(
    {
      BIMS_DATA_DIR: dataDir,
      BIMS_ADMIN_PASSWORD: PASSWORD,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_EXTRACTION_WORKERS: '1',
      ...sidecar.env,
    },
    { startupMs: 120_000, root },
  );
  try {
    const url = await service.listening;
    for (const username of ['flooder', 'bystander'])
      await call(url, admin, 'POST', '/admin/accounts/create', {
        username,
        password: `${username}-password`,
        role: 'USER',
      });
    // The other account alone first: what its calls cost without the flood, on this service and this Janus.
    const alone: number[] = [];
    for (let i = 0; i < Math.ceil(calls / 48); i++) {
      const own = await call(url, bystander, 'POST', '/user/gateway/create-and-attach');
      alone.push(own.ms);
      if (own.status === 200)
        await call(url, bystander, 'POST', '/user/gateway/stop', { sessionId: own.json.session_id });
    }
    const janusPid = sidecar.sidecar.janus.snapshot().pid!;
    const files = () => readdirSync(`/proc/${janusPid}/fd`).length;
    const filesBefore = files();
    let peakFiles = filesBefore;
    const sampler = setInterval(() => (peakFiles = Math.max(peakFiles, files())), 100);
    const statuses: Record<number, number> = {};
    const other: { status: number; ms: number }[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: atOnce }, async () => {
        while (next < calls) {
          const i = next++;
          if (i % 48 === 0) {
            const own = await call(url, bystander, 'POST', '/user/gateway/create-and-attach');
            other.push({ status: own.status, ms: own.ms });
            if (own.status === 200)
              await call(url, bystander, 'POST', '/user/gateway/stop', { sessionId: own.json.session_id });
          }
          const { status } = await call(url, flooder, 'POST', '/user/gateway/create-and-attach');
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const sessions = (await call(url, admin, 'GET', '/admin/gateway/list-sessions')).json?.sessions?.length ?? null;
    const otherLatency = percentiles(
      other.map((o) => o.ms),
      seconds,
    ).latencyMs;
    return {
      label,
      seconds: Math.round(seconds * 10) / 10,
      flooder: statuses,
      other: {
        calls: other.length,
        ok: other.filter((o) => o.status === 200).length,
        statuses: other.map((o) => o.status),
        p50Ms: otherLatency.p50,
        maxMs: otherLatency.max,
        aloneP50Ms: percentiles(alone, 1).latencyMs.p50,
        aloneMaxMs: percentiles(alone, 1).latencyMs.max,
      },
      janus: { sessionsAfter: sessions, filesBefore, peakFiles },
      load: loadavg()[0],
    };
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    await sidecar.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function run(args: string[]) {
  const calls = option(args, 'calls', 1000);
  const atOnce = option(args, 'at-once', 16);
  const rounds = option(args, 'rounds', 2);
  const baseline = args.includes('--baseline') ? args[args.indexOf('--baseline') + 1] : undefined;
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    // Alternated, so the machine's drift falls on both alike.
    const order = r % 2 === 0 ? ['this', 'baseline'] : ['baseline', 'this'];
    for (const which of order) {
      if (which === 'baseline' && !baseline) continue;
      runs.push(await flood(which, which === 'baseline' ? baseline : undefined, calls, atOnce));
    }
  }
  return { calls, atOnce, runs };
}
