// What `npm start` tells the person who ran it: a summary on stderr (URL, docs, dashboard, database, and each
// capability on or off with why and the command that turns it on), from real starts of the Node entry.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { findProgram, janusPlan, prepareGateway, summaryLines } from '../../src/runtime/startup-summary.js';
import { unpackMigratedPglite } from '../support/pglite-image.js';
import { freePorts } from '../support/ports.js';
import { ensureTool } from '../../scripts/tool.mjs';
import { startService, type ServiceProcess } from '../support/service-process.js';

const dirs: string[] = [];
const runs: ServiceProcess[] = [];
afterAll(async () => {
  for (const r of runs) r.child.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function waitFor(check: () => boolean, what: string, ms = 180_000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Start the entry and answer its summary's lines (between "is ready" and the licence line). */
async function summaryOf(env: Record<string, string>): Promise<{ lines: string[]; output: string; url: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bims-summary-'));
  dirs.push(dataDir);
  // Already migrated: the summary is under test here, not a first start's initdb and migrations (those run in
  // package.test.ts, `bims migrate` on an empty directory).
  await unpackMigratedPglite(dataDir);
  const run = startService(
    { BIMS_DATA_DIR: dataDir, BIMS_PASSWORD_ITERATIONS: '10000', BIMS_DASHBOARD_PORT: '0', ...env },
    { startupMs: 180_000 },
  );
  runs.push(run);
  const url = await run.listening;
  // The summary for people goes to stderr and its log line to stdout, right after: two pipes, which arrive in
  // either order, so both are awaited.
  await waitFor(
    () => /^ {2}licence {4}/m.test(run.output()) && /"message":"startup summary/.test(run.output()),
    'the startup summary and its log line',
  );
  const output = run.output();
  const lines = output.slice(output.indexOf('BIMS 0.')).split('\n');
  run.child.kill('SIGTERM');
  await run.exited;
  return { lines: lines.slice(0, lines.findIndex((l) => l.startsWith('  licence')) + 1), output, url };
}

type Summary = Awaited<ReturnType<typeof summaryOf>>;

describe('startup summary', () => {
  // Both starts at once (each on its own data directory and ports), each test awaiting its own: a start is
  // mostly waiting on model loading and imports, so two overlap well.
  let plain: Promise<Summary>;
  let voiceAndJanusMissing: Promise<Summary>;
  beforeAll(() => {
    ensureTool('bench'); // onnxruntime-node, which `npm install` puts there: the plain start's backend is native
    plain = summaryOf({});
    voiceAndJanusMissing = freePorts(3).then(([sidecar, janusHttp, janusAdmin]) =>
      summaryOf({
        BIMS_VOICE_MODEL: '/nonexistent/voice.onnx',
        BIMS_SIDECAR: 'on',
        BIMS_SIDECAR_PORT: String(sidecar),
        BIMS_JANUS_HTTP_PORT: String(janusHttp),
        BIMS_JANUS_ADMIN_PORT: String(janusAdmin),
        BIMS_JANUS_BIN: '/nonexistent/janus',
        BIMS_EXTRACTION_BACKEND: 'wasm',
      }),
    );
    // A start that fails is reported by the test that awaits it, not as an unhandled rejection meanwhile.
    for (const summary of [plain, voiceAndJanusMissing]) summary.catch(() => {});
  });

  it('names where BIMS answers, its database, that faces (on the native backend, installed) and voice are on; the gateway off with the reason and the command', async () => {
    const { lines, url, output } = await plain;
    expect(lines[0]).toMatch(/^BIMS \d+\.\d+\.\d+ is ready$/);
    expect(lines).toContain(`  URL        ${url}`);
    expect(lines).toContain(`  API docs   ${url}/docs`);
    expect(lines).toContain(`  dashboard  ${url}/dashboard/`);
    expect(lines.find((l) => l.startsWith('  database'))).toMatch(
      /^ {2}database {3}PGlite \(embedded\) in \/.*bims-summary-/,
    );
    expect(lines).toContain('  faces      on: native backend (onnxruntime-node)');
    expect(lines).toContain('  voice      on');
    expect(lines).toContain(
      '  gateway    off: the sidecar is off (BIMS_SIDECAR=off). Turn on: unset BIMS_SIDECAR and start again',
    );
    expect(lines).toContain(
      '  licence    off: UNLICENSED: no licence is checked and every operation is unlimited. Turn on: set BIMS_LICENCE_PUBLIC_KEY (npm run licence -- keygen --out DIR makes a key pair)',
    );
    expect(lines).toHaveLength(9);
    // The same, for machines, as one log line.
    expect(output).toMatch(
      /"message":"startup summary".*"faces":"on","voice":"on","gateway":"off: the sidecar is off \(BIMS_SIDECAR=off\)"/,
    );
  }, 300_000);

  it('says voice is off and how to build the model, that Janus is missing in one plain line with the command, when it may not install it, and the wasm backend asked for', async () => {
    const { lines, output } = await voiceAndJanusMissing;
    expect(lines).toContain(
      "  voice      off: the voice model is not installed or cannot be loaded. Turn on: npm run voice-model (downloads Resemblyzer's checkpoint; offline: npm run voice-model -- --from pretrained.pt; docs/voice.md)",
    );
    expect(lines).toContain(
      '  gateway    off: Janus is not installed (/nonexistent/janus not found). Turn on: install Janus or point BIMS_JANUS_BIN at it',
    );
    expect(lines).toContain('  faces      on: wasm backend (BIMS_EXTRACTION_BACKEND=wasm)');
    expect(output).toContain(
      'BIMS: gateway off: Janus is not installed (/nonexistent/janus not found); turn it on with: install Janus or point BIMS_JANUS_BIN at it\n',
    );
    expect(output.match(/BIMS: gateway off/g)).toHaveLength(1);
  }, 300_000);
});

describe('the camera page in the summary', () => {
  it('is named when the media gateway is on, and not when it is off (the page could not capture)', () => {
    const capabilities = (gateway: boolean) => ({
      faces: { on: true, detail: '' },
      voice: { on: true, detail: '' },
      gateway: { on: gateway, detail: gateway ? '' : 'off' },
      licence: { on: true, detail: '' },
    });
    const camera = '  camera     http://127.0.0.1:8080/dashboard/capture.html (enrol and verify with a webcam)';
    expect(
      summaryLines({ url: 'http://127.0.0.1:8080', database: 'PGlite', capabilities: capabilities(true) }),
    ).toContain(camera);
    expect(
      summaryLines({ url: 'http://127.0.0.1:8080', database: 'PGlite', capabilities: capabilities(false) }).some((l) =>
        l.startsWith('  camera'),
      ),
    ).toBe(false);
  });
});

describe('Janus before the sidecar', () => {
  it('installs it only when missing, under its default name, as root with apt-get', () => {
    const def = { BIMS_JANUS_BIN: 'janus' };
    expect(janusPlan(def, { found: true, root: true, aptGet: true })).toBe('present');
    expect(janusPlan(def, { found: false, root: true, aptGet: true })).toBe('install');
    expect(janusPlan(def, { found: false, root: false, aptGet: true })).toBe('missing');
    expect(janusPlan(def, { found: false, root: true, aptGet: false })).toBe('missing');
    expect(janusPlan({ BIMS_JANUS_BIN: '/opt/janus/bin/janus' }, { found: false, root: true, aptGet: true })).toBe(
      'missing',
    );
  });

  it('finds programs by name on PATH or by path, and reports the gateway of a present Janus as on', () => {
    expect(findProgram('sh')).toMatch(/\/sh$/);
    expect(findProgram('no-such-program-here')).toBeNull();
    expect(findProgram('/bin/sh')).toBe('/bin/sh');
    const lines: string[] = [];
    const gateway = prepareGateway(loadConfig({ BIMS_JANUS_BIN: '/bin/sh' }), (l) => lines.push(l));
    expect(gateway).toEqual({ on: true, detail: 'Janus at /bin/sh' });
    expect(lines).toEqual([]);
    expect(prepareGateway(loadConfig({ BIMS_JANUS: 'off' }), (l) => lines.push(l))).toMatchObject({
      on: false,
      detail: 'Janus is off (BIMS_JANUS=off)',
    });
  });
});
