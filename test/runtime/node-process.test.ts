import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverPort } from '../support/ports.js';

const root = join(import.meta.dirname, '..', '..');

/** Start the real Node entry as `npm start` does, and collect its output. */
function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/runtime/node.ts'], {
    cwd: root,
    // The sidecar has its own test (node-sidecar.test.ts); here it would only contend for the default ports.
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', BIMS_SIDECAR: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function waitFor(check: () => boolean, what: string, ms = 60_000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the Node entry', () => {
  it('refuses invalid configuration with a message naming the variable', async () => {
    const run = start({ PORT: 'not-a-port' });
    children.push(run.child);
    expect(await run.exited).toBe(2);
    expect(run.output()).toMatch(/Invalid configuration:\s+PORT/);
  });

  it('starts on PGlite, prints a generated admin password once, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bims-node-'));
    dirs.push(dataDir);
    const port = await serverPort();
    const run = start({ PORT: port, BIMS_DATA_DIR: dataDir, BIMS_PASSWORD_ITERATIONS: '10000' });
    children.push(run.child);
    await waitFor(() => /"message":"listening"/.test(run.output()), 'the server to listen');
    const password = run.output().match(/with the password: (\S+)/)?.[1];
    expect(password).toBeTruthy();
    const ready = await fetch(`http://127.0.0.1:${port}/ready`);
    expect(ready.status).toBe(200);
    // Idle connections are held past a proxy's 60 s (BIMS_HTTP_KEEP_ALIVE_SECONDS), and clients are told so.
    expect(ready.headers.get('keep-alive')).toBe('timeout=65');

    // A request whose body is still arriving when SIGTERM comes must still be answered.
    const body = JSON.stringify({ username: 'late', password: 'late-password', role: 'USER' });
    const auth = Buffer.from(`admin:${password}`).toString('base64');
    const socket = connect(Number(port), '127.0.0.1');
    let response = '';
    socket.on('data', (d) => (response += d));
    await new Promise((r) => socket.on('connect', r));
    socket.write(
      `POST /admin/accounts/create HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
    );
    await new Promise((r) => setTimeout(r, 300));
    run.child.kill('SIGTERM');
    await waitFor(() => /shutting down/.test(run.output()), 'the shutdown to begin');
    socket.write(body.slice(10));
    await waitFor(() => response.includes('\r\n\r\n'), 'the in-flight response');
    expect(response).toMatch(/^HTTP\/1\.1 201/);
    expect(await run.exited).toBe(0);

    // The account was written, and the admin password is not regenerated on the next start.
    const again = start({ PORT: port, BIMS_DATA_DIR: dataDir });
    children.push(again.child);
    await waitFor(() => /"message":"listening"/.test(again.output()), 'the second start');
    expect(again.output()).not.toMatch(/with the password/);
    const res = await fetch(`http://127.0.0.1:${port}/admin/accounts/count?username=late`, {
      headers: { authorization: `Basic ${auth}` },
    });
    expect(await res.json()).toEqual({ count: 1 });
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 120_000); // a whole service process starts and stops here: 16-20 CPU-s, which a busy 2-core runner stretches past the default 60 s
});
