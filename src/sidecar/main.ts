import { loadConfigOrExit } from '../runtime/node-config.js';
import { configuredLogger } from '../logger.js';
import { startSidecar } from './start.js';

/**
 * `npm run sidecar`: the separate Node process that owns what an edge runtime cannot reach (Janus today).
 * `npm start` runs this same entry as a child process, talking to it over IPC only to learn its address and
 * to notice when the parent goes away.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  if (!config.BIMS_SIDECAR_TOKEN) {
    console.error('BIMS_SIDECAR_TOKEN must be set (at least 32 characters): the API presents it to the sidecar');
    process.exit(2);
  }
  const log = configuredLogger(config);
  const sidecar = await startSidecar(config, log);
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info('sidecar stopping', { why });
    setTimeout(() => process.exit(1), 10_000).unref();
    await sidecar.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  if (process.send) {
    // Started by `npm start`: report the address, and stop with the parent even if it dies without a word.
    process.send({ type: 'ready', url: sidecar.url });
    process.on('disconnect', () => void stop('parent gone'));
  }
}

main().catch((error) => {
  console.error(`BIMS sidecar failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
