// npm run bench -- login-timing [--rounds N] [--iterations N]
// Whether the time of a refused login tells which user names exist (issue 32, point 4): a known account with
// a wrong password, a disabled account, and a name no account has, through each way to present a password
// (HTTP Basic on an operation, POST /login, the token endpoint's client_credentials grant), alternated in
// every round (the order turns each round) against one service at the production strength of the key
// derivation (BIMS_PASSWORD_ITERATIONS, 600,000 by default). Prints medians per kind and path and their
// ratios to the known account's: 1.0 means no oracle; before the fix an unknown name took 0.03-0.1 of it.
import { loadavg } from 'node:os';
import { loadConfig } from '../src/config/config.js';
import { boot } from '../src/runtime/bootstrap.js';
import { createLogger } from '../src/logger.js';

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round1 = (n: number) => Math.round(n * 10) / 10;
const round3 = (n: number) => Math.round(n * 1000) / 1000;

const KINDS = ['known', 'disabled', 'unknown'] as const;
const PATHS = ['basic', 'login', 'token'] as const;
type Kind = (typeof KINDS)[number];
type Path = (typeof PATHS)[number];

export async function run(args: string[]) {
  const rounds = option(args, 'rounds', 12);
  const iterations = option(args, 'iterations', 600_000);
  const password = 'bench-admin-password';
  const config = loadConfig({
    BIMS_ADMIN_PASSWORD: password,
    BIMS_PASSWORD_ITERATIONS: String(iterations),
    BIMS_LOG_LEVEL: 'silent',
    // Every attempt fails: the throttle must not answer before the check does.
    BIMS_LOGIN_FREE_FAILURES: '1000',
    BIMS_LOGIN_ADDRESS_FAILURES: '1000000',
  });
  const booted = await boot({
    config,
    runtime: 'bench',
    hostname: 'bench',
    pgliteDir: 'memory://',
    logger: createLogger('silent'),
  });
  const admin = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
  for (const [username, enabled] of [
    ['known', true],
    ['disabled', false],
  ] as const) {
    const res = await booted.app.request('/admin/accounts/create', {
      method: 'POST',
      headers: { authorization: admin, 'content-type': 'application/json' },
      body: JSON.stringify({ username, password: `${username}-password`, role: 'USER', enabled }),
    });
    if (res.status !== 201) throw new Error(`creating ${username}: ${res.status}`);
  }
  const nameOf: Record<Kind, string> = { known: 'known', disabled: 'disabled', unknown: 'nobody-by-that-name' };

  const attempt = async (path: Path, kind: Kind, n: number) => {
    const username = nameOf[kind];
    const wrong = `wrong-password-${n}`;
    const started = performance.now();
    const res =
      path === 'basic'
        ? await booted.app.request('/user/management/info', {
            headers: { authorization: `Basic ${Buffer.from(`${username}:${wrong}`).toString('base64')}` },
          })
        : path === 'login'
          ? await booted.app.request('/login', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ username, password: wrong }),
            })
          : await booted.app.request('/oauth2/token', {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({
                grant_type: 'client_credentials',
                client_id: username,
                client_secret: wrong,
              }),
            });
    await res.arrayBuffer();
    const ms = performance.now() - started;
    if (res.status !== 401) throw new Error(`${path} ${kind}: expected 401, got ${res.status}`);
    return ms;
  };

  const times = Object.fromEntries(
    PATHS.map((p) => [p, Object.fromEntries(KINDS.map((k) => [k, [] as number[]]))]),
  ) as Record<Path, Record<Kind, number[]>>;
  const load = [loadavg()[0]!];
  for (const path of PATHS) for (const kind of KINDS) await attempt(path, kind, -1); // warm-up
  let n = 0;
  for (let r = 0; r < rounds; r++) {
    for (const path of PATHS) {
      // The kinds in turn, their order rotated each round, so that drift in the machine's speed falls on each.
      const order = KINDS.map((_, i) => KINDS[(i + r) % KINDS.length]!);
      for (const kind of order) times[path][kind].push(await attempt(path, kind, n++));
    }
  }
  load.push(loadavg()[0]!);
  await booted.close();

  const medians = Object.fromEntries(
    PATHS.map((p) => [p, Object.fromEntries(KINDS.map((k) => [k, round1(median(times[p][k]))]))]),
  ) as Record<Path, Record<Kind, number>>;
  const ratios = Object.fromEntries(
    PATHS.map((p) => [
      p,
      {
        unknownOverKnown: round3(medians[p].unknown / medians[p].known),
        disabledOverKnown: round3(medians[p].disabled / medians[p].known),
      },
    ]),
  );
  return { bench: 'login-timing', iterations, rounds, medianMs: medians, ratios, loadAverage1m: load.map(round1) };
}
