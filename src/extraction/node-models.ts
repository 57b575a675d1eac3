// Node-only: reads model files from wasm/models/ (the Node worker pool and tests use this loader).
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { configureJpegDecoder } from '../biometrics/image/decode.js';
import { fileURLToPath } from 'node:url';
import type { ModelLoader } from './ort-web-runner.js';
import manifest from '../../wasm/models/voice-manifest.json' with { type: 'json' };

/**
 * Directory holding the fetched model files: wasm/models/ of the repository or of the installed package
 * (the package's postinstall fetches them there), also from the compiled dist/src/extraction/.
 */
export const MODELS_DIR = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../../wasm/models/' : '../../../wasm/models/', import.meta.url),
);

/**
 * Loader reading `dir/<file>` (default wasm/models/), except the speaker encoder when BIMS_VOICE_MODEL names
 * a model file (or the folder holding it): that file is read instead. The variable is read from the
 * environment when a model is loaded because the extraction workers load it in their own threads (which
 * inherit the environment) and the configuration checks it at start (src/config/config.ts).
 */
export function nodeModelLoader(dir: string = MODELS_DIR): ModelLoader {
  return async (file) => {
    const voiceModel = file === manifest.model.file ? process.env.BIMS_VOICE_MODEL : undefined;
    if (voiceModel) {
      const isDir = await stat(voiceModel).then(
        (s) => s.isDirectory(),
        () => false,
      );
      return new Uint8Array(await readFile(isDir ? `${voiceModel}/${file}` : voiceModel));
    }
    return new Uint8Array(await readFile(dir.endsWith('/') ? dir + file : `${dir}/${file}`));
  };
}

let jpegModule: Promise<WebAssembly.Module> | undefined;
/** Compiles @jsquash/jpeg's mozjpeg decoder (once per thread) and enables it for `decodeImage`. */
export async function enableFastJpegNode(): Promise<void> {
  jpegModule ??= (async () => {
    const path = createRequire(import.meta.url).resolve('@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm');
    return WebAssembly.compile(await readFile(path));
  })();
  configureJpegDecoder(await jpegModule);
}
