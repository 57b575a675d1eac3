// Deno entry (`deno task start`, with the deno of tools/deno: docs/runtimes.md): the same application as on Node, served with Deno.serve. Deno runs the
// TypeScript sources directly (deno.json turns on sloppy imports for our `.js` specifiers) and the npm
// packages from node_modules. Face extraction uses the Node worker pool through Deno's node:worker_threads
// (or a Node extraction service named by BIMS_EXTRACTION_URL);
// the sidecar (dongle, Janus) is a Node process of its own here: point BIMS_SIDECAR_URL at it.
import { ConfigError, baseUrlOf, loadConfig, refuseMatcherCluster, type Config } from '../config/config.js';
import { createExtractor } from '../extraction/index.js';
import { extractorOptionsOf } from './extractor-options.js';
import { boot } from './bootstrap.js';
import { nodeAssetReader } from './node-assets.js';
import { withFiles } from './node-config.js';

/** The part of the Deno namespace this entry uses (declared here so that tsc on Node can check the file). */
interface DenoApi {
  version: { deno: string };
  env: { toObject(): Record<string, string> };
  hostname(): string;
  exit(code: number): never;
  addSignalListener(signal: 'SIGTERM' | 'SIGINT', handler: () => void): void;
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { shutdown(): Promise<void>; finished: Promise<void> };
}
const Deno = (globalThis as unknown as { Deno: DenoApi }).Deno;

/** Configuration from Deno's environment; an invalid one prints each bad variable and exits with 2. */
function configOrExit(): Config {
  try {
    return refuseMatcherCluster(withFiles(loadConfig(Deno.env.toObject())), 'Deno');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return Deno.exit(2);
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  const booted = await boot({
    config,
    runtime: `deno ${Deno.version.deno}`,
    hostname: Deno.hostname(),
    announceAdminPassword: (password) =>
      console.log(
        `\n  BIMS created the account 'admin' with the password: ${password}\n  It is shown only this once; set BIMS_ADMIN_PASSWORD to choose it yourself.\n`,
      ),
    clientAddress: (_request, env) =>
      (env as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr?.hostname ?? 'unknown',
    readAsset: nodeAssetReader(),
    // Deno runs the TypeScript worker itself, and only on WebAssembly (no onnxruntime-node).
    createExtractor: () =>
      createExtractor(
        extractorOptionsOf(config, {
          workerUrl: new URL('../../workers/face.worker.ts', import.meta.url),
          backend: 'wasm',
        }),
      ),
  });
  void booted.services.extractors
    .get()
    .catch((error) => booted.services.ctx.log.warn('face extraction unavailable', { reason: String(error) }));
  const server = Deno.serve(
    {
      port: config.PORT,
      hostname: config.HOST,
      onListen: ({ port }) => {
        const url = baseUrlOf({ ...config, PORT: port });
        booted.services.ctx.log.info('listening', {
          url,
          database: booted.services.ctx.dialect,
          docs: `${url}/docs`,
          runtime: 'deno',
        });
      },
    },
    (request, info) => booted.app.fetch(request, info),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    booted.services.ctx.log.info('shutting down: finishing requests in flight', { signal });
    // shutdown() stops accepting connections and resolves once those in flight have been answered.
    await server.shutdown();
    await booted.close();
    Deno.exit(0);
  };
  Deno.addSignalListener('SIGTERM', () => void stop('SIGTERM'));
  Deno.addSignalListener('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  console.error(`BIMS failed to start: ${error instanceof Error ? error.message : String(error)}`);
  Deno.exit(1);
});
