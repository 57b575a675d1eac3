import { FaceSdkError } from './errors.js';

/**
 * Fetching the SDK's static files (models, onnxruntime-web's wasm, the mozjpeg decoder). Base URLs are
 * resolved against the page (or worker) location so relative folders such as `/bims-sdk/` work, and always
 * end with a slash so that `new URL(file, base)` appends rather than replaces the last segment.
 */

/** Absolute folder URL with a trailing slash. */
export function folderUrl(base: string | URL): string {
  const href = new URL(String(base), (globalThis as { location?: { href: string } }).location?.href).href;
  return href.endsWith('/') ? href : `${href}/`;
}

/** Bytes of `file` under `folder`. @throws FaceSdkError ASSET_UNAVAILABLE on a network error or non-2xx. */
export async function fetchBytes(fetcher: typeof fetch, folder: string, file: string): Promise<Uint8Array> {
  const url = new URL(file, folder).href;
  let res: Response;
  try {
    res = await fetcher(url);
  } catch (e) {
    throw new FaceSdkError('ASSET_UNAVAILABLE', `${url}: ${(e as Error).message}`);
  }
  if (!res.ok) throw new FaceSdkError('ASSET_UNAVAILABLE', `${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** onnxruntime-web's CPU backend (the plain wasm build, the binary the Node pool runs too). */
export const ORT_WASM = 'ort-wasm-simd-threaded.wasm';

/** The name of @jsquash/jpeg's decoder binary, copied next to onnxruntime-web's wasm by the build. */
export const MOZJPEG_WASM = 'mozjpeg_dec.wasm';

/**
 * Compiles the mozjpeg decoder. The service decodes JPEGs with it, and jpeg-js (the fallback) rounds
 * differently, so without it the device's embeddings would drift slightly from the enrolled ones.
 */
export async function compileMozjpeg(fetcher: typeof fetch, wasmFolder: string): Promise<WebAssembly.Module> {
  return WebAssembly.compile((await fetchBytes(fetcher, wasmFolder, MOZJPEG_WASM)) as Uint8Array<ArrayBuffer>);
}
