// Cloudflare Workers entry (wrangler.toml `main`): the same application, built from the Worker's bindings on
// the first request of each isolate and reused by the requests after it.
//   HYPERDRIVE  PostgreSQL through Hyperdrive (its connectionString); one connection per query or transaction
//   ASSETS      static assets: the face models (models/) and Swagger UI (swagger-ui/), see build-workers.mjs
//   vars        the same BIMS_* settings as elsewhere (wrangler.toml [vars] and secrets)
// Extraction runs inside the isolate (onnxruntime-web on its wasm imported as a compiled module, one thread),
// or in a Node extraction service when BIMS_EXTRACTION_URL names one.
import ortWasm from 'onnxruntime-web/ort-wasm-simd-threaded.wasm';
import jpegWasm from '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
import { ConfigError, loadConfig, refuseMatcherCluster } from '../config/config.js';
import { createInlineExtractor } from '../extraction/inline.js';
import { createRemoteExtractor } from '../extraction/remote.js';
import { VERSION } from '../version.js';
import { PROBLEM_BASE } from '../http/problem.js';
import { boot, type Booted } from './bootstrap.js';
import { ortMemoryBytes, precompiledOrtBinary } from './workers-wasm.js';

/** The bindings this Worker reads (names as in wrangler.toml). */
export interface WorkersEnv {
  HYPERDRIVE?: { connectionString: string };
  ASSETS?: { fetch(request: Request | string): Promise<Response> };
  [variable: string]: unknown;
}

/** An asset of the ASSETS binding as bytes, or null when it is not there. */
async function readAsset(env: WorkersEnv, path: string): Promise<Uint8Array | null> {
  if (!env.ASSETS) return null;
  const res = await env.ASSETS.fetch(new Request(`https://assets.invalid/${path}`));
  return res.ok ? new Uint8Array(await res.arrayBuffer()) : null;
}

async function start(env: WorkersEnv): Promise<Booted> {
  if (!env.HYPERDRIVE?.connectionString) {
    throw new ConfigError(
      'Invalid configuration:\n  HYPERDRIVE: bind a Hyperdrive configuration (PGlite is not available on Workers)',
    );
  }
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const config = refuseMatcherCluster(
    loadConfig({ ...vars, DATABASE_URL: env.HYPERDRIVE.connectionString }),
    'Cloudflare Workers',
  );
  const booted: Booted = await boot({
    config,
    runtime: `workers (bims ${VERSION})`,
    hostname: 'cloudflare-workers',
    transientConnections: true,
    // No LISTEN on Workers: every gallery search first reads the change log for other nodes' changes.
    galleryFreshness: 'poll',
    clientAddress: (request) => request.headers.get('cf-connecting-ip') ?? 'unknown',
    readAsset: (name) => readAsset(env, `swagger-ui/${name}`),
    createExtractor: async () => {
      if (config.BIMS_EXTRACTION_URL)
        return createRemoteExtractor({ url: config.BIMS_EXTRACTION_URL, token: config.BIMS_EXTRACTION_TOKEN! });
      const extractor = await createInlineExtractor({
        wasmBinary: precompiledOrtBinary(ortWasm),
        jpegWasm,
        loadModel: async (file) => {
          const bytes = await readAsset(env, `models/${file}`);
          if (!bytes) throw new Error(`models/${file} is not in the ASSETS binding`);
          return bytes;
        },
      });
      // Workers give an isolate 128 MB: say how much of it the models and sessions took.
      const bytes = ortMemoryBytes();
      if (bytes !== null)
        booted.services.ctx.log.info('face extractor ready', { onnxruntimeMemoryMiB: Math.round(bytes / 2 ** 20) });
      return extractor;
    },
  });
  // Load the gallery inside this request: work left running after the response may be cut short.
  await booted.services.gallery.ready();
  return booted;
}

let booting: Promise<Booted> | null = null;

export default {
  async fetch(request: Request, env: WorkersEnv, ctx: unknown): Promise<Response> {
    booting ??= start(env);
    let booted: Booted;
    try {
      booted = await booting;
    } catch (error) {
      booting = null; // try again on the next request
      // The reason (configuration, database address) is for the operator's logs, not for any caller.
      console.error(`BIMS failed to start: ${error instanceof Error ? error.message : String(error)}`);
      const detail = 'BIMS could not start; the Worker logs say why';
      return Response.json(
        { type: `${PROBLEM_BASE}/service-unavailable`, title: 'Service unavailable', status: 503, detail },
        {
          status: 503,
          headers: { 'content-type': 'application/problem+json' },
        },
      );
    }
    return booted.app.fetch(request, env, ctx as never);
  },
};
