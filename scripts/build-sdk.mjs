#!/usr/bin/env node
// `npm run build:sdk`: the browser face SDK (src/sdk/index.ts) as one ESM bundle, with every file it fetches
// at run time beside it, so that dist/sdk/ can be served as it is by any static file server:
//
//   dist/sdk/bims-face-sdk.js            the bundle (+ .map)
//   dist/sdk/ort-wasm-simd-threaded.wasm onnxruntime-web's CPU backend, the very binary the Node pool runs
//   dist/sdk/mozjpeg_dec.wasm            the JPEG decoder the service uses (jpeg-js would round differently)
//   dist/sdk/fr_detect.onnx, fr_landmark.onnx, fr_feature.onnx   the template models (wasm/models/)
//   dist/sdk/bims-capture.js             the capture helper alone (captureWithGateway, src/sdk/gateway-capture.ts):
//                                        a few KiB for pages that stream a camera and extract nothing themselves
//
// Why `onnxruntime-web/wasm`: the package's browser default is the WebGPU/JSEP build with a different wasm
// binary; the plain wasm build is the one Node loads, so device and service run the same machine code. Its
// glue is embedded in the bundle (single thread, no proxy worker), so no .mjs file needs to be served.
//
// The build fails if a Node built-in (node:*, fs, path ...) reaches the bundle: the SDK must run in browsers.
import { build } from 'esbuild';
import { builtinModules, createRequire } from 'node:module';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'sdk');
const require = createRequire(import.meta.url);
const BUNDLE = 'bims-face-sdk.js';
const CAPTURE_BUNDLE = 'bims-capture.js';
const MODELS = ['fr_detect.onnx', 'fr_landmark.onnx', 'fr_feature.onnx'];

const nodeBuiltins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const isNodeBuiltin = (path) =>
  path.startsWith('node:') || nodeBuiltins.has(path) || nodeBuiltins.has(path.split('/')[0]);

/** Records every import of a Node built-in (esbuild would otherwise only fail on those it cannot resolve). */
const refuseNode = {
  name: 'refuse-node-builtins',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      isNodeBuiltin(args.path)
        ? {
            errors: [
              { text: `Node built-in "${args.path}" imported by ${args.importer}: the SDK must run in browsers` },
            ],
          }
        : undefined,
    );
  },
};

const started = performance.now();
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

/** One browser ESM bundle: minified, source map beside it, no Node built-in (refuseNode). */
const bundle = (entry, outfile, what, extra = {}) =>
  build({
    entryPoints: [join(root, 'src', 'sdk', entry)],
    outfile: join(out, outfile),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [refuseNode],
    ...extra,
  }).catch(() => fail(`esbuild failed on ${what} (errors above)`));

const result = await bundle('index.ts', BUNDLE, 'the SDK', { alias: { 'onnxruntime-web': 'onnxruntime-web/wasm' } });
const capture = await bundle('gateway-capture.ts', CAPTURE_BUNDLE, 'the capture helper');

// Second line of defence: nothing external, and no node: specifier left in the text (e.g. a dynamic import
// built from a string esbuild could not see through).
for (const [file, output] of [
  ...Object.entries(result.metafile.outputs),
  ...Object.entries(capture.metafile.outputs),
]) {
  const bad = output.imports.filter((i) => i.external || isNodeBuiltin(i.path));
  if (bad.length) fail(`${file} imports ${bad.map((i) => i.path).join(', ')} at run time`);
}
const text = readFileSync(join(out, BUNDLE), 'utf8');
const nodeRef = text.match(/(?:from|import\(|require\()\s*["'`]node:[\w/]+/);
if (nodeRef) fail(`the bundle still references ${nodeRef[0]}`);

const ortWasm = require.resolve('onnxruntime-web/ort-wasm-simd-threaded.wasm');
const jpegWasm = require.resolve('@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm');
copyFileSync(ortWasm, join(out, 'ort-wasm-simd-threaded.wasm'));
copyFileSync(jpegWasm, join(out, 'mozjpeg_dec.wasm'));
for (const model of MODELS) {
  const src = join(root, 'wasm', 'models', model);
  if (!existsSync(src)) fail(`${src} is missing: run \`node scripts/fetch-models.mjs\` first`);
  copyFileSync(src, join(out, model));
}

const kb = (f) => Math.round(statSync(join(out, f)).size / 1024);
console.log(
  `[build:sdk] dist/sdk/${BUNDLE} ${kb(BUNDLE)} KiB, ${CAPTURE_BUNDLE} ${kb(CAPTURE_BUNDLE)} KiB; ort wasm ${kb('ort-wasm-simd-threaded.wasm')} KiB, mozjpeg ${kb('mozjpeg_dec.wasm')} KiB, ` +
    `models ${MODELS.reduce((a, m) => a + kb(m), 0)} KiB; ${Math.round(performance.now() - started)} ms`,
);

function fail(message) {
  console.error(`[build:sdk] ${message}`);
  process.exit(1);
}
