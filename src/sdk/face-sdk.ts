import type { Rectangle, StageTimings } from '../biometrics/face/analysis.js';
import { TEMPLATE_MODELS } from '../biometrics/face/runner.js';
import { encodeFaceTemplate } from '../biometrics/template.js';
import { createInlineExtractor } from '../extraction/inline.js';
import { compileMozjpeg, fetchBytes, folderUrl, ORT_WASM } from './assets.js';
import { toBase64 } from '../encoding/base64.js';
import { FaceSdkError } from './errors.js';
import { toEncodedImage, type ImageInput } from './image-input.js';

/** Options of {@link createFaceSdk}. */
export interface FaceSdkOptions {
  /** Folder serving the model files (`fr_detect.onnx`, `fr_landmark.onnx`, `fr_feature.onnx`), e.g. '/bims-sdk/'. */
  modelBaseUrl: string | URL;
  /** Folder serving `ort-wasm-simd-threaded.wasm` and `mozjpeg_dec.wasm` (the build puts them beside the bundle). */
  wasmBaseUrl: string | URL;
  /**
   * Check every model against the SHA-256 of the manifest the bundle was built with (default: true where
   * `crypto.subtle` exists, i.e. on https or localhost). A model that differs from the service's would make
   * templates that never match, so a mismatch fails `createFaceSdk` loudly instead.
   */
  verifyModels?: boolean;
  /** Run one dummy inference per model at start so the first real template is not slow (default true). */
  warm?: boolean;
  /** Per-template timeout in milliseconds (default 30000). */
  timeoutMs?: number;
  /** The fetch used for assets (default: globalThis.fetch), e.g. to add credentials or a cache. */
  fetch?: typeof fetch;
}

/** Options of one extraction. */
export interface ExtractTemplateOptions {
  /** Take the most confident face when several are found (default false: MULTIPLE_FACES, as the service does by default). */
  allowMultipleFaces?: boolean;
}

/** A fresh template made on the device. */
export interface DeviceTemplate {
  /** Template bytes in format v1 (docs/template-format.md), as the service stores and matches them. */
  template: Uint8Array;
  /** The same bytes in base64, as `remoteVerify` sends them. */
  templateBase64: string;
  /** Template version; equal to the enrolled template's, or the service refuses the comparison. */
  templateVersion: string;
  /**
   * Quality 0..100 from size, sharpness, exposure and detector confidence. Pose and open eyes are not part of
   * it unless their models were loaded, so it can read higher than the service's quality for the same photo.
   */
  quality: number;
  /** Face box in pixels of the upright image. */
  rectangle: Rectangle;
  /** Faces found in the image. */
  faceCount: number;
  /** Milliseconds per stage (decode, detect, landmarks, embed, total). */
  timings: StageTimings;
}

/** The SDK handle. */
export interface FaceSdk {
  /** Template version of every template this SDK makes (model set, version, pipeline revision). */
  readonly templateVersion: string;
  /** Extracts a template from one image. @throws FaceSdkError NO_FACE / MULTIPLE_FACES / UNSUPPORTED_INPUT, BiometricError for unreadable images */
  extractTemplate(image: ImageInput, options?: ExtractTemplateOptions): Promise<DeviceTemplate>;
  /** Frees the onnxruntime sessions. Idempotent; later calls reject with CLOSED. */
  close(): Promise<void>;
}

/**
 * Loads the face pipeline in the browser: the SAME inline extractor the service runs on Deno and Workers
 * (src/extraction/inline.ts over onnxruntime-web), so a device template is comparable with the enrolled one
 * bit for bit. Nothing leaves the device: models and wasm are fetched, images are only read locally.
 *
 * Inference runs on the calling thread; to keep a UI responsive, create the SDK inside a module Web Worker
 * (everything here works there, including ImageBitmap inputs).
 *
 * @example
 * const sdk = await createFaceSdk({ modelBaseUrl: '/bims-sdk/', wasmBaseUrl: '/bims-sdk/' });
 * const { templateBase64, quality } = await sdk.extractTemplate(await (await fetch('selfie.jpg')).blob());
 */
export async function createFaceSdk(options: FaceSdkOptions): Promise<FaceSdk> {
  const fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  const modelFolder = folderUrl(options.modelBaseUrl);
  const wasmFolder = folderUrl(options.wasmBaseUrl);
  const extractor = await createInlineExtractor({
    loadModel: (file) => fetchBytes(fetcher, modelFolder, file),
    // Only what a template needs (detect, landmarks, embedding: 7.3 MB of the 15.7 MB of models); the
    // attribute models (pose, eyes, liveness, age, gender) serve the service's checks, not matching.
    models: TEMPLATE_MODELS,
    // The face SDK never fetches the speaker encoder.
    voice: false,
    // Only the .wasm is fetched: the glue is embedded in the bundle, so there is no .mjs to serve.
    wasmPaths: { wasm: new URL(ORT_WASM, wasmFolder).href },
    jpegWasm: await compileMozjpeg(fetcher, wasmFolder),
    verify: options.verifyModels ?? typeof crypto?.subtle?.digest === 'function',
    warm: options.warm,
    jobTimeoutMs: options.timeoutMs,
  });
  let closed = false;

  return {
    templateVersion: extractor.templateVersion,
    async extractTemplate(image, opts = {}) {
      if (closed) throw new FaceSdkError('CLOSED', 'the face SDK is closed');
      const analysis = await extractor.analyseFace(await toEncodedImage(image), { checks: false });
      const faces = analysis.faces;
      if (faces.length === 0) throw new FaceSdkError('NO_FACE', 'no face found in the image');
      if (faces.length > 1 && !opts.allowMultipleFaces)
        throw new FaceSdkError('MULTIPLE_FACES', `${faces.length} faces found; one was expected`);
      const face = faces[0];
      const template = encodeFaceTemplate(extractor.templateVersion, face);
      return {
        template,
        templateBase64: toBase64(template),
        templateVersion: extractor.templateVersion,
        quality: face.quality,
        rectangle: face.rectangle,
        faceCount: faces.length,
        timings: analysis.timings,
      };
    },
    async close() {
      closed = true;
      await extractor.close();
    },
  };
}
