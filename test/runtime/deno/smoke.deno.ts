// `deno task test` (the deno of tools/deno: docs/runtimes.md): runs `deno task start` (src/runtime/deno.ts) on PGlite, and
// on PostgreSQL when DATABASE_URL names a database, then runs the runtime smoke suite against it, the suite
// itself running in Deno too. Run by test/runtime/deno.test.ts from `npm test`. Not named *.test.ts: vitest
// (Node) collects those, and this file needs Deno.
import { smokeSuite, type SmokePhotos } from '../smoke/smoke-suite.js';

/** The part of the Deno namespace used here (declared so tsc on Node checks this file too). */
interface DenoTestApi {
  test(name: string, fn: (t: { step(name: string, fn: () => Promise<void>): Promise<boolean> }) => Promise<void>): void;
  execPath(): string;
  makeTempDir(): Promise<string>;
  remove(path: string, options: { recursive: boolean }): Promise<void>;
  readFile(url: URL): Promise<Uint8Array>;
  env: { get(name: string): string | undefined };
  Command: new (
    cmd: string,
    options: {
      args: string[];
      cwd: string;
      clearEnv: boolean;
      env: Record<string, string>;
      stdout: 'piped';
      stderr: 'inherit';
    },
  ) => {
    spawn(): { stdout: ReadableStream<Uint8Array>; kill(signal: 'SIGTERM'): void; status: Promise<{ code: number }> };
  };
}
const Deno = (globalThis as unknown as { Deno: DenoTestApi }).Deno;

const root = new URL('../../../', import.meta.url);
const ADMIN_PASSWORD = 'deno-smoke-admin-password';

async function photos(): Promise<SmokePhotos> {
  const photo = (path: string) => Deno.readFile(new URL(`test/fixtures/photos/labelled/${path}`, root));
  return {
    enrol: await photo('cage/cage.jpg'),
    genuine: await photo('cage/cage2_crop.jpg'),
    impostor: await photo('clooney/fragrance-George-Clooney-main_crop.jpg'),
  };
}

const passOn = (name: string): Record<string, string> => {
  const value = Deno.env.get(name);
  return value === undefined ? {} : { [name]: value };
};

/** `deno task start` on a free port; resolves at its "listening" log line, which carries the URL. */
async function startService(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    // Exactly what an operator runs; deno task passes SIGTERM on to the service.
    args: ['task', 'start'],
    cwd: root.pathname,
    // Only what is given here: an inherited DATABASE_URL would turn the PGlite run into a PostgreSQL one.
    clearEnv: true,
    env: {
      PATH: Deno.env.get('PATH') ?? '',
      HOME: Deno.env.get('HOME') ?? '/tmp',
      ...passOn('DENO_DIR'),
      PORT: '0',
      BIMS_ADMIN_PASSWORD: ADMIN_PASSWORD,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_EXTRACTION_WORKERS: '1',
      ...env,
    },
    stdout: 'piped',
    stderr: 'inherit',
  }).spawn();
  const lines = child.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the Deno entry exited before listening:\n${buffered}`);
    buffered += decoder.decode(value, { stream: true });
    const listening = buffered.match(/"message":"listening","url":"([^"]+)","database":"(\w+)"/);
    if (listening) {
      // Keep draining stdout so the service never blocks on a full pipe.
      void (async () => {
        while (!(await lines.read()).done);
      })();
      return { url: listening[1]!, database: listening[2]!, child };
    }
  }
}

const targets: [string, Record<string, string>][] = [['pglite', {}]];
const databaseUrl = Deno.env.get('DATABASE_URL');
if (databaseUrl) targets.push(['postgres', { DATABASE_URL: databaseUrl }]);

for (const [dialect, env] of targets) {
  Deno.test(`BIMS on Deno over ${dialect}: smoke suite`, async (t) => {
    const dataDir = await Deno.makeTempDir();
    const service = await startService({ BIMS_DATA_DIR: dataDir, ...env });
    let exitCode: number;
    try {
      if (service.database !== dialect) throw new Error(`expected ${dialect}, the service reports ${service.database}`);
      for (const step of smokeSuite({ baseUrl: service.url, adminPassword: ADMIN_PASSWORD }, await photos())) {
        if (!(await t.step(step.name, step.run))) throw new Error(`step failed: ${step.name}`);
      }
    } finally {
      service.child.kill('SIGTERM');
      exitCode = (await service.child.status).code;
      await Deno.remove(dataDir, { recursive: true });
    }
    // Checked after the finally, so that a failed step's own error is the one reported.
    if (exitCode !== 0) throw new Error(`the Deno entry exited with ${exitCode} after SIGTERM`);
  });
}
