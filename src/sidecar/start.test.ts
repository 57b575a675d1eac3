import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.js';
import { createLogger } from '../logger.js';
import { startSidecar, type RunningSidecar } from './start.js';

let sidecar: RunningSidecar;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bims-sidecar-start-'));
  const config = loadConfig({
    BIMS_SIDECAR_PORT: '0',
    BIMS_SIDECAR_TOKEN: 'a'.repeat(40),
    BIMS_JANUS: 'off',
    BIMS_DATA_DIR: dir,
  });
  sidecar = await startSidecar(config, createLogger('silent'));
});

afterAll(async () => {
  await sidecar?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** One GET on a kept-alive connection: the status and the connection headers as sent. */
function get(path: string): Promise<{ status: number; connection?: string; keepAlive?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${sidecar.url}${path}`, { headers: { connection: 'keep-alive' } }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          connection: res.headers.connection,
          keepAlive: res.headers['keep-alive'] as string | undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the sidecar server', () => {
  it('keeps a connection open for as long as its caller does: no idle timeout of its own is announced', async () => {
    const answer = await get('/health');
    expect(answer.status).toBe(200);
    expect(answer.connection).toBe('keep-alive');
    // A `Keep-Alive: timeout=5` would have callers race the server's close once their event loop runs late.
    expect(answer.keepAlive).toBeUndefined();
  });
});
