// npm postinstall: fetch the face models (SHA-256 checked against wasm/models/manifest.json).
// A failure is reported clearly but does not fail `npm install` (offline installs stay usable); the
// extractor then refuses to start with MODEL_UNAVAILABLE, and `node scripts/fetch-models.mjs` retries.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

if (process.env.BIMS_SKIP_MODELS === '1') {
  console.log('postinstall: BIMS_SKIP_MODELS=1, not fetching face models');
} else {
  const script = fileURLToPath(new URL('./fetch-models.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (r.status !== 0)
    console.warn(
      'postinstall: face models are NOT available; run `node scripts/fetch-models.mjs` before starting BIMS',
    );
  // The speaker encoder is optional: without it faces work and voice operations answer 503 naming it. The script
  // copies it from ../shared/, or downloads and converts Resemblyzer's checkpoint (bounded in time), and says
  // what to do when it cannot; its status never fails the install.
  const voice = spawnSync(process.execPath, [fileURLToPath(new URL('./fetch-voice-model.mjs', import.meta.url))], {
    stdio: 'inherit',
  });
  if (voice.status !== 0)
    console.warn(
      'postinstall: the voice model is NOT available (what to do is above; docs/voice.md); faces are not affected',
    );
}

// The native extraction backend: onnxruntime-node (about 100 MB from the npm registry; its install script, which
// downloads GPU libraries from elsewhere, denied) in tools/bench, kept once per machine by scripts/tool.mjs. With it
// BIMS_EXTRACTION_BACKEND=auto, the default, runs the face models at about half the CPU per face; without it
// (offline, BIMS_SKIP_NATIVE=1, an unsupported platform) the service runs the portable wasm path and its start-up
// summary says so. Only in a checkout: an installed package has no tools/ (an application adds onnxruntime-node
// beside bims instead, docs/extraction.md).
const toolScript = fileURLToPath(new URL('./tool.mjs', import.meta.url));
const benchTool = fileURLToPath(new URL('../tools/bench/package-lock.json', import.meta.url));
if (process.env.BIMS_SKIP_NATIVE === '1') {
  console.log('postinstall: BIMS_SKIP_NATIVE=1, not installing the native extraction backend (wasm will be used)');
} else if (existsSync(toolScript) && existsSync(benchTool)) {
  const native = spawnSync(process.execPath, [toolScript, 'bench'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (native.status !== 0)
    console.warn(
      'postinstall: the native extraction backend (onnxruntime-node) is NOT installed; faces run on wasm, at about twice the CPU. `npm run native-backend` retries (docs/extraction.md)',
    );
}
