import * as ort from 'onnxruntime-web';
import { BiometricError } from '../biometrics/errors.js';
import { FACE_MODELS, type FaceModelId, type ModelRunner } from '../biometrics/face/runner.js';
import manifest from '../../wasm/models/manifest.json' with { type: 'json' };
import { flushSubnormalWeights } from './onnx-flush-subnormals.js';

/** Loads the bytes of one model file named in wasm/models/manifest.json (e.g. 'fr_detect.onnx'). */
export type ModelLoader = (file: string) => Promise<Uint8Array>;

/** Options of the onnxruntime-web runner. */
export interface OrtWebOptions {
  /** Where model bytes come from (the Node pool reads files; Deno/Workers fetch or import them). */
  loadModel: ModelLoader;
  /** Models to load (default: all of FACE_MODELS). */
  models?: readonly FaceModelId[];
  /** Precompiled ort wasm binary (needed on Cloudflare Workers, where fetching the .wasm is impossible). */
  wasmBinary?: ArrayBufferLike | Uint8Array;
  /**
   * Override of where ort finds its files (browsers): a folder prefix for both .wasm and .mjs, or
   * `{ wasm: url }` to fetch only the .wasm and keep the glue code embedded in a bundle (no .mjs to serve).
   */
  wasmPaths?: string | { wasm?: string; mjs?: string };
  /** Run one dummy inference per model after loading so the first request is not slow (default true). */
  warm?: boolean;
  /** Check each file's SHA-256 against the manifest before loading it (default true). */
  verify?: boolean;
}

/** The template version written into every template this runner's pipeline produces. */
export const FACE_TEMPLATE_VERSION: string = manifest.templateVersion;

let envConfigured = false;
/** Configures onnxruntime-web once per thread (one wasm thread, SIMD); the voice runner shares it. */
export function configureEnv(opts: Pick<OrtWebOptions, 'wasmBinary' | 'wasmPaths'>): void {
  if (envConfigured) return;
  envConfigured = true;
  // One thread per session: the pool parallelises across workers, and Workers/Deno have no wasm threads.
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.logLevel = 'error';
  if (opts.wasmBinary) ort.env.wasm.wasmBinary = opts.wasmBinary as ArrayBuffer;
  if (opts.wasmPaths) ort.env.wasm.wasmPaths = opts.wasmPaths;
}

const FILE_OF = new Map(manifest.models.map((m) => [m.id, m.file]));
const SHA_OF = new Map(manifest.models.map((m) => [m.file, m.sha256]));

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The bytes of one face model, checked against the manifest's SHA-256 unless `verify` is false. Both backends
 * (this runner and the native one, src/extraction/node-native-runner.ts) load models through it, so they run
 * the very same files. @throws BiometricError MODEL_UNAVAILABLE naming the file and the fetch command.
 */
export async function readFaceModel(
  id: FaceModelId,
  opts: Pick<OrtWebOptions, 'loadModel' | 'verify'>,
): Promise<{ file: string; bytes: Uint8Array }> {
  const file = FILE_OF.get(id);
  if (!file) throw new BiometricError('MODEL_UNAVAILABLE', `model ${id} is not in the manifest`);
  let bytes: Uint8Array;
  try {
    bytes = await opts.loadModel(file);
  } catch (e) {
    throw new BiometricError(
      'MODEL_UNAVAILABLE',
      `model file ${file} could not be read (${(e as Error).message}); run \`node scripts/fetch-models.mjs\``,
    );
  }
  if (opts.verify !== false) {
    const got = await sha256Hex(bytes);
    if (got !== SHA_OF.get(file)) {
      throw new BiometricError(
        'MODEL_UNAVAILABLE',
        `model file ${file} is corrupt (sha256 ${got}, manifest ${SHA_OF.get(file)}); run \`node scripts/fetch-models.mjs\``,
      );
    }
  }
  // Checked as fetched, run with subnormal weights set to zero: same outputs, up to 4x faster on x86
  // (onnx-flush-subnormals.ts).
  return { file, bytes: flushSubnormalWeights(bytes) };
}

/**
 * ModelRunner on onnxruntime-web (wasm backend, SIMD, one thread). Sessions are created once and reused.
 * Calls are serialised: one session runs one inference at a time.
 */
export class OrtWebRunner implements ModelRunner {
  private constructor(private readonly sessions: Map<FaceModelId, ort.InferenceSession>) {}

  /** Loads (and by default warms) the sessions. @throws BiometricError MODEL_UNAVAILABLE */
  static async create(opts: OrtWebOptions): Promise<OrtWebRunner> {
    configureEnv(opts);
    const sessions = new Map<FaceModelId, ort.InferenceSession>();
    for (const id of opts.models ?? FACE_MODELS) {
      const { file, bytes } = await readFaceModel(id, opts);
      try {
        sessions.set(
          id,
          await ort.InferenceSession.create(bytes, {
            executionProviders: ['wasm'],
            graphOptimizationLevel: 'all',
            logSeverityLevel: 3,
          }),
        );
      } catch (e) {
        throw new BiometricError(
          'MODEL_UNAVAILABLE',
          `model file ${file} is not a valid ONNX model (${(e as Error).message})`,
        );
      }
    }
    const runner = new OrtWebRunner(sessions);
    if (opts.warm !== false) await runner.warm();
    return runner;
  }

  private warm(): Promise<void> {
    return warmSessions(this.sessions, (id, input, dims) => this.run(id, input, dims));
  }

  async run(model: FaceModelId, input: Float32Array, dims: readonly number[]): Promise<Record<string, Float32Array>> {
    const s = this.sessions.get(model);
    if (!s) throw new BiometricError('MODEL_UNAVAILABLE', `model ${model} was not loaded`);
    const t = new ort.Tensor('float32', input, dims);
    const out = await s.run({ input: t });
    t.dispose();
    const res: Record<string, Float32Array> = {};
    for (const [k, v] of Object.entries(out)) {
      // Copy out of the wasm heap view before disposing.
      res[k] = new Float32Array(v.data as Float32Array);
      v.dispose();
    }
    return res;
  }

  async release(): Promise<void> {
    for (const s of this.sessions.values()) await s.release();
    this.sessions.clear();
  }
}

/**
 * One inference per model on a mid-grey input (dynamic dimensions as 1), so the first request does not pay for
 * the kernels' set-up. Shared by the wasm and the native runner.
 */
export async function warmSessions<Id>(
  sessions: Map<Id, { inputMetadata: readonly unknown[] }>,
  run: (id: Id, input: Float32Array, dims: number[]) => Promise<unknown>,
): Promise<void> {
  for (const [id, s] of sessions) {
    const meta = s.inputMetadata[0] as { shape?: readonly (number | string)[] } | undefined;
    const dims = (meta?.shape ?? []).map((d) => (typeof d === 'number' ? d : 1));
    await run(id, new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.5), dims);
  }
}
