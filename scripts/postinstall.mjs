// npm postinstall: fetch the face models (SHA-256 checked against wasm/models/manifest.json).
// A failure is reported clearly but does not fail `npm install` (offline installs stay usable); the
// extractor then refuses to start with MODEL_UNAVAILABLE, and `node scripts/fetch-models.mjs` retries.
import { spawnSync } from 'node:child_process';
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
