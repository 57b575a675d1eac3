// Node-only: the native extraction backend (BIMS_EXTRACTION_BACKEND=native, and `auto` where it loads). The face
// models run in onnxruntime-node, the same ONNX Runtime compiled for the host's CPU (AVX2/FMA kernels, no wasm
// sandbox), under the same ModelRunner interface as onnxruntime-web: pre- and post-processing, models and template
// version are those of the portable wasm path, so templates from either backend match each other. onnxruntime-node
// is not a dependency of the root package (its install script downloads GPU libraries from outside the registry):
// `npm install`'s postinstall (or `npm run native-backend`) installs it in tools/bench with its script denied (the
// CPU binary ships in the package). The extraction workers run it; the Node entries load it once at start-up only
// to see that it loads (node-face-backend.ts).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as OrtCommon from 'onnxruntime-common';
import { BiometricError } from '../biometrics/errors.js';
import { FACE_MODELS, type FaceModelId, type ModelRunner } from '../biometrics/face/runner.js';
import { readFaceModel, warmSessions, type OrtWebOptions } from './ort-web-runner.js';
import { splitPRelu } from './native-split-prelu.js';
import { NATIVE_SESSION_OPTIONS } from './native-session-options.js';

/** What installs onnxruntime-node (scripts/tool.mjs installs tools/bench with `npm ci` from its lock). */
export const NATIVE_BACKEND_COMMAND = 'npm run native-backend';

/** tools/bench of the repository (from src/extraction/ when run from source, dist/src/extraction/ in a build). */
const TOOLS_BENCH = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../../tools/bench/' : '../../../tools/bench/', import.meta.url),
);

/**
 * Where onnxruntime-node is found: tools/bench (what `npm run native-backend` installs), else wherever Node
 * resolves it from BIMS itself (an application that installed onnxruntime-node beside bims). Undefined when
 * neither has it. Resolves only: the native library is loaded by the workers that use it.
 */
export function resolveOrtNode(
  toolsDir: string = TOOLS_BENCH,
  besideBims: string = import.meta.url,
): string | undefined {
  for (const base of [join(toolsDir, 'package.json'), besideBims]) {
    try {
      return createRequire(base).resolve('onnxruntime-node');
    } catch {
      // not installed there: try the next place
    }
  }
  return undefined;
}

/**
 * The command that installs onnxruntime-node here: in a checkout, `npm run native-backend` (tools/bench); in an
 * application that installed the `bims` package (no tools/), npm's install of it beside bims, its script denied.
 */
export function nativeInstallCommand(toolsDir: string = TOOLS_BENCH): string {
  return existsSync(join(toolsDir, 'package.json'))
    ? NATIVE_BACKEND_COMMAND
    : 'npm install onnxruntime-node --ignore-scripts';
}

/** The one line start-up prints when the native backend is chosen but not installed; undefined when it is. */
export function nativeBackendMissing(
  toolsDir: string = TOOLS_BENCH,
  besideBims: string = import.meta.url,
): string | undefined {
  return resolveOrtNode(toolsDir, besideBims)
    ? undefined
    : `BIMS_EXTRACTION_BACKEND=native needs onnxruntime-node, which is not installed: run \`${nativeInstallCommand(toolsDir)}\` (or set BIMS_EXTRACTION_BACKEND=wasm)`;
}

type OrtNode = typeof OrtCommon;

let ortNode: OrtNode | undefined;
/** Loads onnxruntime-node (once per thread). @throws BiometricError MODEL_UNAVAILABLE naming the install command */
function loadOrtNode(): OrtNode {
  if (ortNode) return ortNode;
  const path = resolveOrtNode();
  if (!path) throw new BiometricError('MODEL_UNAVAILABLE', nativeBackendMissing()!);
  try {
    ortNode = createRequire(import.meta.url)(path) as OrtNode;
  } catch (e) {
    throw new BiometricError(
      'MODEL_UNAVAILABLE',
      `onnxruntime-node (${path}) could not be loaded on this host (${(e as Error).message}); use BIMS_EXTRACTION_BACKEND=wasm`,
    );
  }
  return ortNode;
}

/**
 * ModelRunner on onnxruntime-node, CPU execution provider. One intra-op thread per session, like one wasm
 * thread: the pool already runs one worker per core, and a second thread pool per worker would only make the
 * workers take each other's cores.
 */
export class OrtNodeRunner implements ModelRunner {
  private constructor(
    private readonly ort: OrtNode,
    private readonly sessions: Map<FaceModelId, OrtCommon.InferenceSession>,
  ) {}

  /** Loads (and by default warms) the sessions from the same files as the wasm runner. @throws BiometricError MODEL_UNAVAILABLE */
  static async create(opts: Pick<OrtWebOptions, 'loadModel' | 'models' | 'warm' | 'verify'>): Promise<OrtNodeRunner> {
    const ort = loadOrtNode();
    const sessions = new Map<FaceModelId, OrtCommon.InferenceSession>();
    for (const id of opts.models ?? FACE_MODELS) {
      const { file, bytes } = await readFaceModel(id, opts);
      try {
        // PRelu split into operators onnxruntime-node keeps in its NCHWc layout: the same outputs, bit for bit,
        // fr_feature about a fifth faster (native-split-prelu.ts; the wasm runner keeps the model as it is).
        sessions.set(id, await ort.InferenceSession.create(splitPRelu(bytes), NATIVE_SESSION_OPTIONS));
      } catch (e) {
        throw new BiometricError(
          'MODEL_UNAVAILABLE',
          `model file ${file} could not be loaded by onnxruntime-node (${(e as Error).message})`,
        );
      }
    }
    const runner = new OrtNodeRunner(ort, sessions);
    if (opts.warm !== false) await runner.warm();
    return runner;
  }

  /** One inference per model on a mid-grey input, so the first request does not pay for the kernels' set-up. */
  private warm(): Promise<void> {
    return warmSessions(this.sessions, (id, input, dims) => this.run(id, input, dims));
  }

  async run(model: FaceModelId, input: Float32Array, dims: readonly number[]): Promise<Record<string, Float32Array>> {
    const s = this.sessions.get(model);
    if (!s) throw new BiometricError('MODEL_UNAVAILABLE', `model ${model} was not loaded`);
    const out = await s.run({ input: new this.ort.Tensor('float32', input, dims) });
    const res: Record<string, Float32Array> = {};
    // The outputs are ordinary JavaScript arrays owned by their tensors (no wasm heap to copy out of).
    for (const [k, v] of Object.entries(out)) res[k] = v.data as Float32Array;
    return res;
  }

  async release(): Promise<void> {
    for (const s of this.sessions.values()) await s.release();
    this.sessions.clear();
  }
}
