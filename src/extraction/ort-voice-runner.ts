import * as ort from 'onnxruntime-web';
import { BiometricError } from '../biometrics/errors.js';
import type { VoiceModelRunner } from '../biometrics/voice/pipeline.js';
import { VOICE_EMBEDDING_DIMS } from '../biometrics/voice/pipeline.js';
import { configureEnv, type ModelLoader, type OrtWebOptions } from './ort-web-runner.js';
import { foldHalfCasts } from './onnx-fold-casts.js';
import { REFERENCE_TOLERANCE, referenceDifference, referenceMels } from './voice-reference.js';
import manifest from '../../wasm/models/voice-manifest.json' with { type: 'json' };

/** The template version of every voice template (model set, version, front-end revision). */
export const VOICE_TEMPLATE_VERSION: string = manifest.templateVersion;
/** File name of the speaker encoder in the models folder. */
export const VOICE_MODEL_FILE: string = manifest.model.file;

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

const missing = (why: string) =>
  new BiometricError(
    'MODEL_UNAVAILABLE',
    `voice model ${VOICE_MODEL_FILE} ${why}; build it with \`npm run voice-model\` (downloads Resemblyzer's published checkpoint and converts it; offline, from a copy of it: \`npm run voice-model -- --from pretrained.pt\`), or copy the shipped file with \`node scripts/fetch-voice-model.mjs\` (from ../shared/models/voice/), or name a model file in BIMS_VOICE_MODEL`,
  );

/**
 * The GE2E speaker encoder on onnxruntime-web (wasm, one thread), checked against its manifest hash and
 * warmed with one partial before use.
 */
export class OrtVoiceRunner implements VoiceModelRunner {
  private constructor(private readonly session: ort.InferenceSession) {}

  /**
   * A file with the manifest's hash is the shipped model; any other is accepted only when it embeds the
   * reference input as the shipped model does (a rebuild from the upstream weights: see voice-reference.ts).
   * @throws BiometricError MODEL_UNAVAILABLE naming the missing, corrupt or different model file.
   */
  static async create(
    opts: { loadModel: ModelLoader; verify?: boolean; warm?: boolean } & Pick<
      OrtWebOptions,
      'wasmBinary' | 'wasmPaths'
    >,
  ): Promise<OrtVoiceRunner> {
    configureEnv(opts);
    let bytes: Uint8Array;
    try {
      bytes = await opts.loadModel(VOICE_MODEL_FILE);
    } catch (e) {
      throw missing(`is missing (${(e as Error).message})`);
    }
    const got = opts.verify !== false ? await sha256Hex(bytes) : manifest.model.sha256;
    let session: ort.InferenceSession;
    try {
      // The hash is of the file as shipped; the session gets its float16 weights widened once (same outputs,
      // about 12 ms less per run: see onnx-fold-casts.ts).
      session = await ort.InferenceSession.create(foldHalfCasts(bytes), {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3,
      });
    } catch (e) {
      throw missing(`is not a valid ONNX model (${(e as Error).message})`);
    }
    const runner = new OrtVoiceRunner(session);
    if (got !== manifest.model.sha256) {
      const diff = referenceDifference(await runner.embed(referenceMels(), 1).catch(() => new Float32Array(0)));
      if (diff > REFERENCE_TOLERANCE) {
        await runner.release();
        throw missing(
          `is corrupt or a different model (sha256 ${got}, manifest ${manifest.model.sha256}; its embedding of the reference input differs by ${diff.toPrecision(3)}, more than ${REFERENCE_TOLERANCE})`,
        );
      }
    } else if (opts.warm !== false) await runner.embed(new Float32Array(160 * 40).fill(0.01), 1);
    return runner;
  }

  async embed(mels: Float32Array, batch: number): Promise<Float32Array> {
    const t = new ort.Tensor('float32', mels, [batch, 160, 40]);
    const out = await this.session.run({ mels: t }, ['embedding']);
    t.dispose();
    const e = out.embedding!;
    // Copy out of the wasm heap before disposing.
    const res = new Float32Array(e.data as Float32Array);
    e.dispose();
    if (res.length !== batch * VOICE_EMBEDDING_DIMS)
      throw new BiometricError(
        'EXTRACTION_FAILED',
        `voice encoder answered ${res.length} values for ${batch} partials`,
      );
    return res;
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
