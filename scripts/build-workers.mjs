#!/usr/bin/env node
// `npm run build:workers`: the Cloudflare Workers build, exactly what `wrangler deploy` would upload.
//   dist/cloudflare-assets/models/      the face models of wasm/models/manifest.json and the voice model (ASSETS binding)
//   dist/cloudflare-assets/swagger-ui/  the docs page's Swagger UI files
//   dist/cloudflare/                    `wrangler deploy --dry-run --outdir`: workers.js + the two .wasm modules
// then measures the upload as Cloudflare counts it (gzip of every module) against the Workers size limits,
// prints it and writes it to dist/cloudflare/size.json. Exits 1 when the bundle is over the paid plan's limit.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { node22 } from './node22.mjs';
import { toolPath } from './tool.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const MIB = 1024 * 1024;
/** Compressed Worker size limits (Cloudflare docs, "Worker size"). */
const LIMITS = { free: 3 * MIB, paid: 10 * MIB };
/** Largest single static asset. */
const ASSET_LIMIT = 25 * MIB;

const assets = join(root, 'dist', 'cloudflare-assets');
// Not dist/workers/: that is where tsc puts the compiled worker-thread entry (npm run build).
const out = join(root, 'dist', 'cloudflare');
rmSync(assets, { recursive: true, force: true });
rmSync(out, { recursive: true, force: true });

const manifest = JSON.parse(readFileSync(join(root, 'wasm', 'models', 'manifest.json'), 'utf8'));
mkdirSync(join(assets, 'models'), { recursive: true });
for (const { file } of manifest.models) copyFileSync(join(root, 'wasm', 'models', file), join(assets, 'models', file));
// The speaker encoder is optional (voice operations answer MODEL_UNAVAILABLE without it), as everywhere else.
const voiceManifest = join(root, 'wasm', 'models', 'voice-manifest.json');
if (existsSync(voiceManifest)) {
  const { file } = JSON.parse(readFileSync(voiceManifest, 'utf8')).model;
  if (existsSync(join(root, 'wasm', 'models', file)))
    copyFileSync(join(root, 'wasm', 'models', file), join(assets, 'models', file));
  else
    console.warn(
      `[build:workers] ${file} is missing (node scripts/fetch-voice-model.mjs): voice operations will answer MODEL_UNAVAILABLE`,
    );
}
const swagger = dirname(require.resolve('swagger-ui-dist/package.json'));
mkdirSync(join(assets, 'swagger-ui'), { recursive: true });
for (const file of [
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'oauth2-redirect.html',
  'oauth2-redirect.js',
]) {
  copyFileSync(join(swagger, file), join(assets, 'swagger-ui', file));
}

// wrangler lives in tools/workers (installed on first use), out of the root install: it requires Node 22.
execFileSync(node22(), [toolPath('workers', 'wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', out], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
});

// Cloudflare counts the compressed size of every uploaded module (source maps and README are not modules).
const modules = readdirSync(out).filter((f) => /\.(js|mjs|wasm)$/.test(f));
const files = modules.map((f) => {
  const bytes = readFileSync(join(out, f));
  return { file: f, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
});
const total = { bytes: files.reduce((a, f) => a + f.bytes, 0), gzip: files.reduce((a, f) => a + f.gzip, 0) };
const assetFiles = readdirSync(assets, { recursive: true })
  .map(String)
  .filter((f) => statSync(join(assets, f)).isFile());
const largestAsset = Math.max(...assetFiles.map((f) => statSync(join(assets, f)).size));
const report = {
  modules: files,
  total,
  limits: LIMITS,
  fitsFreePlan: total.gzip <= LIMITS.free,
  fitsPaidPlan: total.gzip <= LIMITS.paid,
  assets: {
    files: assetFiles.length,
    bytes: assetFiles.reduce((a, f) => a + statSync(join(assets, f)).size, 0),
    largest: largestAsset,
    limit: ASSET_LIMIT,
  },
};
writeFileSync(join(out, 'size.json'), JSON.stringify(report, null, 2));
const mib = (n) => (n / MIB).toFixed(2);
console.log(
  `[build:workers] modules ${mib(total.bytes)} MiB, ${mib(total.gzip)} MiB gzip (limits: free ${mib(LIMITS.free)}, paid ${mib(LIMITS.paid)}); ` +
    `assets ${report.assets.files} files, ${mib(report.assets.bytes)} MiB, largest ${mib(largestAsset)} MiB (limit ${mib(ASSET_LIMIT)})`,
);
if (!report.fitsPaidPlan || largestAsset > ASSET_LIMIT) {
  console.error('[build:workers] over the Workers limits');
  process.exit(1);
}
