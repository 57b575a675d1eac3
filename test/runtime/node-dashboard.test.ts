import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unpackMigratedPglite } from '../support/pglite-image.js';
import { freePorts } from '../support/ports.js';
import { startDashboardServer } from '../../src/dashboard/node-server.js';

/**
 * `npm start` and the dashboard component: started as a child beside the API and stopped with it, or, when
 * DASHBOARD_URL points elsewhere, not started at all (the proxy forwards there).
 */

const root = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function startApi(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bims-dash-'));
  dirs.push(dataDir);
  // Already migrated (about 4 s of a start's CPU): the dashboard child is under test here, not the migrations.
  await unpackMigratedPglite(dataDir);
  const [port] = await freePorts(1);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/runtime/node.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? '/tmp',
      BIMS_SIDECAR: 'off',
      PORT: String(port),
      BIMS_DATA_DIR: dataDir,
      BIMS_PASSWORD_ITERATIONS: '10000',
      BIMS_ADMIN_PASSWORD: 'admin-password-1',
      BIMS_EXTRACTION_WORKERS: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await expect.poll(() => /"message":"listening"/.test(output), { timeout: 60_000, interval: 100 }).toBe(true);
  return { url: `http://127.0.0.1:${port}`, child, exited, output: () => output };
}

describe('npm start and the dashboard', () => {
  it('starts the component beside the API, serves it through /dashboard/, and stops it on SIGTERM', async () => {
    const api = await startApi({ BIMS_DASHBOARD_PORT: '0' });
    const component = api.output().match(/"message":"dashboard listening","url":"([^"]+)"/)?.[1];
    expect(component).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const page = await fetch(`${api.url}/dashboard/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>BIMS dashboard</title>');
    expect(api.output()).toContain(`"dashboard":"${api.url}/dashboard/"`);

    api.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    // The component went with it.
    await expect(fetch(`${component}/dashboard/`)).rejects.toThrow();
  });

  it('with DASHBOARD_URL set, starts no component and forwards there', async () => {
    const elsewhere = await startDashboardServer({ host: '127.0.0.1', port: 0 });
    try {
      const api = await startApi({ DASHBOARD_URL: elsewhere.url });
      expect(api.output()).not.toContain('dashboard listening');
      const echo = await (await fetch(`${api.url}/dashboard/_diagnostics/echo`)).json();
      expect(echo.headers.host).toBe(new URL(elsewhere.url).host);
      // The API's address as seen by the component's proxy hop (the Node entry reports the socket's address).
      expect(echo.headers['x-forwarded-for']).toBe('127.0.0.1');
      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
    } finally {
      await elsewhere.stop();
    }
  });
});
