import { fileURLToPath } from 'node:url';

/** Where the camera page imports the SDK's capture helper from (a path under the dashboard's mounts). */
const CAPTURE_BUNDLE = 'js/bims-capture.js';

// From source (npm start runs TypeScript through tsx) the helper is src/sdk/gateway-capture.ts; in the compiled
// package it is dist/src/sdk/gateway-capture.js, beside this file's own compiled form.
const entry = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../sdk/gateway-capture.ts' : '../sdk/gateway-capture.js', import.meta.url),
);

/**
 * The browser SDK's capture helper (`captureWithGateway`, src/sdk/gateway-capture.ts) as one small ES module for
 * the dashboard's camera page: only the helper and what it imports, not the whole face SDK with onnxruntime
 * and models (dist/sdk/, `npm run build:sdk`), which the page does not need. Built with esbuild when the
 * component starts, so a fresh clone's `npm start` and the compiled package both serve it with no build step
 * of their own; the page therefore runs the very code the SDK ships.
 */
export async function bundleCaptureHelper(): Promise<{ name: string; bytes: Uint8Array }> {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return { name: CAPTURE_BUNDLE, bytes: out.outputFiles[0]!.contents };
}
