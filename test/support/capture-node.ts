// A service node that starts one capture session and then waits to be killed: the capture's frames never
// come (its camera is silent), so it stays WAITING_MEDIA until the process dies. Run by
// test/gateway/capture-cluster.test.ts as a child process (`node --import tsx`), with DATABASE_URL and the
// sidecar's address in its environment; it prints one JSON line, {sessionId, handleId, nodeId}, once the
// capture's row is written.
import { loadConfig } from '../../src/config/config.js';
import { boot } from '../../src/runtime/bootstrap.js';
import { nodeAssetReader } from '../../src/runtime/node-assets.js';
import { createLogger } from '../../src/logger.js';
import { InitParams } from '../../src/schemas/gateway-init.js';

const config = loadConfig({ ...process.env, BIMS_LOG_LEVEL: 'silent' } as Record<string, string>);
const booted = await boot({
  config,
  runtime: 'test',
  hostname: 'capture-node',
  pgliteDir: 'memory://',
  logger: createLogger('silent'),
  readAsset: nodeAssetReader(),
});
const { services } = booted;
const admin = {
  principal: { accountId: null, username: 'admin', role: 'ADMIN' as const, via: 'basic' as const },
  surface: 'admin' as const,
};
const created = await services.gateway.createAndAttach(admin, 'janus.plugin.videoroom');
const sessionId = created.session_id!;
const handleId = created.data!.id!;
await services.gateway.captures.start({
  sessionId,
  handleId,
  starter: { services, caller: admin },
  params: InitParams.parse({ kind: 'FV', purpose: 'CHECK', timeoutSeconds: 5 }),
  media: {
    async *frames(signal) {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    },
    release: async () => {},
  },
});
process.stdout.write(`${JSON.stringify({ sessionId, handleId, nodeId: services.ctx.node.id })}\n`);
setInterval(() => {}, 60_000);
