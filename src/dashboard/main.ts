import { loadConfigOrExit } from '../runtime/node-config.js';
import { configuredLogger } from '../logger.js';
import { startDashboardServer } from './node-server.js';

/**
 * `npm run dashboard`: the dashboard component on its own (then point the API's DASHBOARD_URL at it).
 * `npm start` runs this same entry as a child process and learns its address over IPC.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = configuredLogger(config);
  const server = await startDashboardServer({
    host: config.BIMS_DASHBOARD_HOST,
    port: config.BIMS_DASHBOARD_PORT,
    maxStreams: config.BIMS_STREAMS_TOTAL,
    keepAliveSeconds: config.BIMS_HTTP_KEEP_ALIVE_SECONDS,
    warn: (message, fields) => log.warn(message, fields),
  });
  log.info('dashboard listening', { url: server.url, through: 'the API at /dashboard/ and /admin/dashboard/' });
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info('dashboard stopping', { why });
    setTimeout(() => process.exit(1), 5000).unref();
    await server.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  if (process.send) {
    // Started by `npm start`: report the address, and stop with the parent even if it dies without a word.
    process.send({ type: 'ready', url: server.url });
    process.on('disconnect', () => void stop('parent gone'));
  }
}

main().catch((error) => {
  console.error(`BIMS dashboard failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
