// `bims extraction-service` / `npm run extraction-service`: the face and voice models on a warmed worker pool,
// offered over HTTP (src/extraction/remote-service.ts) to BIMS instances that delegate extraction to it with
// BIMS_EXTRACTION_URL and BIMS_EXTRACTION_TOKEN (Cloudflare Workers, or small API nodes). Configuration from
// the environment: BIMS_EXTRACTION_HOST/PORT, BIMS_EXTRACTION_TOKEN (required), BIMS_EXTRACTION_WORKERS,
// BIMS_EXTRACTION_BACKEND.
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import { prepareHttpServer } from './http-server.js';
import { createExtractor } from '../extraction/index.js';
import { poolOptionsOf } from './extractor-options.js';
import { createExtractionService } from '../extraction/remote-service.js';
import { configuredLogger } from '../logger.js';
import { loadConfigOrExit } from './node-config.js';
import { chooseFaceBackend, type FaceBackendChoice } from '../extraction/node-face-backend.js';

const config = loadConfigOrExit();
const log = configuredLogger(config);
if (!config.BIMS_EXTRACTION_TOKEN) {
  console.error(
    'Invalid configuration:\n  BIMS_EXTRACTION_TOKEN: required by the extraction service (32+ characters, shared with its callers)',
  );
  process.exit(2);
}
let faceBackend: FaceBackendChoice;
try {
  faceBackend = chooseFaceBackend(config.BIMS_EXTRACTION_BACKEND);
} catch (error) {
  console.error(`the extraction service cannot start: ${(error as Error).message}`);
  process.exit(1);
}
// Its own pool always: BIMS_EXTRACTION_URL names a service like this one, not one for it to delegate to.
const extractor = await createExtractor(poolOptionsOf(config, { backend: faceBackend.backend })).catch((error) => {
  console.error(`the extraction service cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
const app = createExtractionService(extractor, {
  token: config.BIMS_EXTRACTION_TOKEN,
  maxBodyBytes: config.BIMS_MAX_BODY_BYTES,
});
const server = serve(
  { fetch: app.fetch, port: config.BIMS_EXTRACTION_PORT, hostname: config.BIMS_EXTRACTION_HOST },
  (info) => {
    log.info('extraction service listening', {
      url: `http://${config.BIMS_EXTRACTION_HOST}:${info.port}`,
      backend: faceBackend.backend,
      backendChosen: faceBackend.why,
      ...extractor.stats(),
    });
  },
);
// Its callers are API nodes reusing connections: the same keep-alive as the API's, so none is reset under a request.
prepareHttpServer(server as Server, config.BIMS_HTTP_KEEP_ALIVE_SECONDS);

let stopping = false;
const stop = () => {
  if (stopping) return; // a signal and the parent's going can both ask
  stopping = true;
  log.info('extraction service stopping');
  server.close(async () => {
    await extractor.close();
    process.exit(0);
  });
  setTimeout(() => process.exit(1), 30_000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
// Started with an IPC channel (`npm test` starts one for a whole run): stop with the parent even if it dies
// without a word, as the sidecar and dashboard children do.
if (process.send) process.once('disconnect', stop);
