export {};
// npm run bench -- <name> [args]: runs one benchmark and prints its JSON result on stdout.
// Benchmarks register here by name; each module exports `run(args): Promise<unknown>`.
const BENCHES: Record<string, () => Promise<{ run(args: string[]): Promise<unknown> }>> = {
  face: () => import('./face.js'),
  matcher: () => import('./matcher.js'),
  api: () => import('./api.js'),
  'api-stages': () => import('./api-stages.js'),
  load: () => import('./load.js'),
  voice: () => import('./voice.js'),
  capture: () => import('./capture.js'),
  'capture-rtp': () => import('./capture-rtp.js'),
  'capture-poll': () => import('./capture-poll.js'),
  upload: () => import('./upload.js'),
  'pglite-worker': () => import('./pglite-worker.js'),
  xnnpack: () => import('./xnnpack.js'),
  scale: () => import('./scale.js'),
  'login-timing': () => import('./login-timing.js'),
  'big-bodies': () => import('./big-bodies.js'),
  hostile: () => import('./hostile.js'),
  'hostile-decode': () => import('./hostile-decode.js'),
  'gateway-flood': () => import('./gateway-flood.js'),
  'code-path': () => import('./code-path.js'),
};

const [name = 'face', ...args] = process.argv.slice(2);
const load = BENCHES[name];
if (!load) {
  console.error(`unknown benchmark "${name}"; known: ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
const result = await (await load()).run(args);
// A benchmark is one run: once its JSON is out, the process ends, whatever a library left running (the capture
// bench's esbuild services, started for the page's SDK bundle, kept `node --import tsx` from exiting).
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`, () => process.exit(0));
