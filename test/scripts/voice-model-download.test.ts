// The voice model from the install for anyone with internet: scripts/fetch-voice-model.mjs (what npm install
// runs) with no shipped copy and no BIMS_VOICE_MODEL downloads Resemblyzer's checkpoint and converts it. The real
// address is out of reach here, so a local HTTP server serves a checkpoint written from the shipped weights (the
// published ones), its own SHA-256 given as the pinned one; the converted model must still be the manifest's
// modelSha256, which no option can change.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyseVoice } from '../../src/biometrics/voice/pipeline.js';
import { nodeModelLoader } from '../../src/extraction/node-models.js';
import { OrtVoiceRunner } from '../../src/extraction/ort-voice-runner.js';
import manifest from '../../wasm/models/voice-manifest.json' with { type: 'json' };
import { resemblyzerCheckpointObject, sharedStateDict } from '../support/shared-voice-weights.js';
import { legacyCheckpoint, Tensor } from '../support/torch-checkpoint-writer.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const dir = mkdtempSync(join(tmpdir(), 'bims-voice-download-'));

// PyTorch's legacy format, as the 2019 checkpoint is; float32 storages, as published.
const published = legacyCheckpoint(resemblyzerCheckpointObject());
// One recurrent weight moved by about one float16 step: the network still embeds the reference input within
// the runner's tolerance, so only the pinned model hash tells it from the published weights.
const nudged = legacyCheckpoint(
  resemblyzerCheckpointObject(
    sharedStateDict().map(([name, t]): [string, Tensor] => {
      if (name !== 'lstm.weight_hh_l2') return [name, t];
      const v = t.values.slice();
      v[7] = v[7]! * (1 + 2 ** -9);
      return [name, new Tensor(t.shape, v)];
    }),
  ),
);

const requests: string[] = [];
const stalled: ServerResponse[] = [];
const server = createServer((req, res) => {
  requests.push(req.url!);
  const send = (body: Uint8Array) => {
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  };
  if (req.url === '/pretrained.pt') send(published);
  else if (req.url === '/nudged.pt') send(nudged);
  else if (req.url === '/cut.pt') {
    // The connection drops halfway through.
    res.writeHead(200, { 'content-length': published.length });
    res.write(published.subarray(0, published.length >> 1), () => res.socket?.destroy());
  } else if (req.url === '/stall.pt') {
    // A megabyte, then nothing more: only the time bound ends it.
    res.writeHead(200, { 'content-length': published.length });
    res.write(published.subarray(0, 1 << 20));
    stalled.push(res);
  } else {
    res.writeHead(404, 'Not Found');
    res.end();
  }
});
let base = '';
let closedPort = 0;
beforeAll(async () => {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port that was just free and is closed again: nothing listens there.
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((done) => probe.close(done));
});
afterAll(async () => {
  for (const res of stalled) res.socket?.destroy();
  await new Promise((done) => server.close(done));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the install step as npm install does, with no shipped copy beside it and no BIMS_VOICE_MODEL. */
async function fetchVoiceModel(
  modelsDir: string,
  ...options: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.BIMS_VOICE_MODEL;
  const args = ['scripts/fetch-voice-model.mjs', '--models-dir', modelsDir, '--shared-dir', join(dir, 'no-shared')];
  return new Promise((done) =>
    execFile(process.execPath, [...args, ...options], { cwd: root, env }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code) : 0, stdout, stderr }),
    ),
  );
}

const modelsDir = (name: string) => {
  const d = join(dir, name);
  rmSync(d, { recursive: true, force: true });
  return mkdtempSync(`${d}-`);
};
const clip = () =>
  new Uint8Array(readFileSync(new URL('../fixtures/speech/asterisk-en_US_f_Allison/vm-newuser.wav', import.meta.url)));

/** The embedding of a real recording by the model the service would load from BIMS_VOICE_MODEL=folder. */
async function embedWith(folder: string | undefined): Promise<Float32Array> {
  const before = process.env.BIMS_VOICE_MODEL;
  if (folder) process.env.BIMS_VOICE_MODEL = folder;
  else delete process.env.BIMS_VOICE_MODEL;
  try {
    const runner = await OrtVoiceRunner.create({ loadModel: nodeModelLoader() });
    try {
      return (await analyseVoice(runner, clip())).embedding!;
    } finally {
      await runner.release();
    }
  } finally {
    if (before === undefined) delete process.env.BIMS_VOICE_MODEL;
    else process.env.BIMS_VOICE_MODEL = before;
  }
}

describe('npm install fetches the voice model when it can reach the published checkpoint', () => {
  it('downloads, converts and installs the pinned model, which the service then loads; a second run downloads nothing', async () => {
    const out = modelsDir('ok');
    const r = await fetchVoiceModel(out, '--url', `${base}/pretrained.pt`, '--sha256', sha256(published));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`downloaded ${published.length} bytes`);
    expect(r.stdout).toContain("the weights are Resemblyzer's published ones");
    expect(r.stdout).toMatch(/voice is on: .*resemblyzer_ge2e_fp16w\.onnx/);
    const model = readFileSync(join(out, manifest.model.file));
    expect(sha256(model)).toBe(manifest.download.modelSha256);
    expect(model.length).toBe(manifest.download.modelBytes);
    const readme = readFileSync(join(out, 'resemblyzer_ge2e_fp16w.README.md'), 'utf8');
    expect(readme).toContain(`${base}/pretrained.pt (sha256 ${sha256(published)})`);
    expect(readme).toMatch(/Apache License 2\.0, Copyright 2019 Resemble\.AI/);
    expect(readdirSync(out).sort()).toEqual(['resemblyzer_ge2e_fp16w.README.md', 'resemblyzer_ge2e_fp16w.onnx']);

    const again = await fetchVoiceModel(out, '--url', `${base}/pretrained.pt`, '--sha256', sha256(published));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('OK (voice:resemblyzer-ge2e@fp16w-1/p1, converted from the published checkpoint)');
    expect(requests.filter((u) => u === '/pretrained.pt')).toHaveLength(1);

    // Voice on at the next start: the service's loader takes it, and its templates are the shipped model's.
    const converted = await embedWith(out),
      shipped = await embedWith(undefined);
    let dot = 0;
    for (let i = 0; i < shipped.length; i++) dot += converted[i]! * shipped[i]!;
    expect(dot).toBeGreaterThan(0.99999);
  });

  it('refuses a checkpoint with another hash, and one whose weights are not the published ones, installing nothing', async () => {
    const [wrongHash, otherWeights] = [modelsDir('wrong-hash'), modelsDir('other-weights')];
    const [a, b] = await Promise.all([
      fetchVoiceModel(wrongHash, '--url', `${base}/pretrained.pt`, '--sha256', '0'.repeat(64)),
      // A mirror may be named with its own checkpoint hash; the model it converts to must still be the pinned one.
      fetchVoiceModel(otherWeights, '--url', `${base}/nudged.pt`, '--sha256', sha256(nudged)),
    ]);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain(
      `sent a file with sha256 ${sha256(published)}, not the pinned ${'0'.repeat(64)}: refusing it, nothing was installed`,
    );
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(
      new RegExp(
        `converts to a model with sha256 [0-9a-f]{64}, not the pinned ${manifest.download.modelSha256}: its weights are not Resemblyzer's published ones`,
      ),
    );
    for (const r of [a, b]) {
      expect(r.stderr).toContain('resemblyzer_ge2e_fp16w.onnx is NOT installed: the downloaded checkpoint was refused');
      expect(r.stderr).toContain('npm run voice-model -- --from pretrained.pt');
    }
    expect(readdirSync(wrongHash)).toEqual([]);
    expect(readdirSync(otherWeights)).toEqual([]);
  });

  it('offline, cut off, stalled or not found: says exactly what to do, leaves nothing behind, within the time bound', async () => {
    const cases = {
      unreachable: `http://127.0.0.1:${closedPort}/pretrained.pt`,
      notFound: `${base}/gone.pt`,
      cut: `${base}/cut.pt`,
      stalled: `${base}/stall.pt`,
    };
    const dirs = Object.fromEntries(Object.keys(cases).map((k) => [k, modelsDir(k)]));
    const runs = Object.fromEntries(
      await Promise.all(
        Object.entries(cases).map(async ([k, url]) => [
          k,
          await fetchVoiceModel(dirs[k]!, '--url', url, '--sha256', sha256(published), '--timeout', '3'),
        ]),
      ),
    ) as Record<keyof typeof cases, Awaited<ReturnType<typeof fetchVoiceModel>>>;
    expect(runs.unreachable.stderr).toContain(`cannot reach ${cases.unreachable} (ECONNREFUSED)`);
    expect(runs.notFound.stderr).toContain(`${cases.notFound} answered HTTP 404 Not Found`);
    expect(runs.cut.stderr).toMatch(
      /the download (was interrupted \(.+\)|stopped) after \d+ (of \d+ )?bytes: nothing was kept/,
    );
    expect(runs.stalled.stderr).toMatch(
      /the download (received nothing for 3 s|took longer than 3 s) after \d+ bytes: nothing was kept/,
    );
    for (const [k, r] of Object.entries(runs)) {
      expect(r.code, k).toBe(1);
      expect(r.stderr, k).toContain(
        "resemblyzer_ge2e_fp16w.onnx is NOT installed: Resemblyzer's checkpoint could not be downloaded (the reason is above). Voice operations answer 503 until it is; faces are not affected.",
      );
      expect(r.stderr, k).toContain(`on a machine that does, download ${cases[k as keyof typeof cases]}`);
      expect(r.stderr, k).toContain('copy it here and run: npm run voice-model -- --from pretrained.pt');
      expect(r.stderr, k).toContain('name a model file in BIMS_VOICE_MODEL');
      expect(readdirSync(dirs[k]!), k).toEqual([]);
    }
  });
});
