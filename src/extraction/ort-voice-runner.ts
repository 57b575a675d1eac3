import * as ort from 'onnxruntime-web';
import { BiometricError } from '../biometrics/errors.js';
import type { VoiceModelRunner } from '../biometrics/voice/pipeline.js';
import { VOICE_EMBEDDING_DIMS } from '../biometrics/voice/pipeline.js';
import { configureEnv, type ModelLoader, type OrtWebOptions } from './ort-web-runner.js';
import { foldHalfCasts } from './onnx-fold-casts.js';
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
  new BiometricError('MODEL_UNAVAILABLE', `voice model ${VOICE_MODEL_FILE} ${why}; run \`node scripts/fetch-voice-model.mjs\` (it copies ../shared/models/voice/ or the file named by BIMS_VOICE_MODEL)`);

/**
 * The GE2E speaker encoder on onnxruntime-web (wasm, one thread), checked against its manifest hash and
 * warmed with one partial before use.
 */
export class OrtVoiceRunner implements VoiceModelRunner {
  private constructor(private readonly session: ort.InferenceSession) {}

  /** @throws BiometricError MODEL_UNAVAILABLE naming the missing or corrupt model file. */
  static async create(opts: { loadModel: ModelLoader; verify?: boolean; warm?: boolean } & Pick<OrtWebOptions, 'wasmBinary' | 'wasmPaths'>): Promise<OrtVoiceRunner> {
    configureEnv(opts);
    let bytes: Uint8Array;
    try {
      bytes = await opts.loadModel(VOICE_MODEL_FILE);
    } catch (e) {
      throw missing(`is missing (${(e as Error).message})`);
    }
    if (opts.verify !== false) {
      const got = await sha256Hex(bytes);
      if (got !== manifest.model.sha256) throw missing(`is corrupt (sha256 ${got}, manifest ${manifest.model.sha256})`);
    }
    let session: ort.InferenceSession;
    try {
      // The hash is of the file as shipped; the session gets its float16 weights widened once (same outputs,
      // about 12 ms less per run: see onnx-fold-casts.ts).
      session = await ort.InferenceSession.create(foldHalfCasts(bytes), { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 });
    } catch (e) {
      throw missing(`is not a valid ONNX model (${(e as Error).message})`);
    }
    const runner = new OrtVoiceRunner(session);
    if (opts.warm !== false) await runner.embed(new Float32Array(160 * 40).fill(0.01), 1);
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
    if (res.length !== batch * VOICE_EMBEDDING_DIMS) throw new BiometricError('EXTRACTION_FAILED', `voice encoder answered ${res.length} values for ${batch} partials`);
    return res;
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
