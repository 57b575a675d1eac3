// Worker thread entry of the Node extraction pool: one set of sessions per worker (face models on onnxruntime-web,
// or on onnxruntime-node with the native backend; the speaker encoder on onnxruntime-web), warmed before it
// reports ready. Holds no state between jobs and touches no database.
import { readlinkSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { BiometricError } from '../src/biometrics/errors.js';
import { analyseImage } from '../src/biometrics/face/pipeline.js';
import { renderTokenImage } from '../src/biometrics/face/token-image.js';
import { observeDecodes } from '../src/biometrics/image/decode.js';
import { analyseVoice } from '../src/biometrics/voice/pipeline.js';
import { enableFastJpegNode, nodeModelLoader } from '../src/extraction/node-models.js';
import { OrtWebRunner } from '../src/extraction/ort-web-runner.js';
import { OrtVoiceRunner } from '../src/extraction/ort-voice-runner.js';
import type { WorkerJob, WorkerReply } from '../src/extraction/node-protocol.js';
import type { ModelRunner } from '../src/biometrics/face/runner.js';

const port = parentPort!;
const { modelsDir, backend } = (workerData ?? {}) as { modelsDir?: string; backend?: 'wasm' | 'native' };

/**
 * This worker's own memory after a job (in a worker thread, heapTotal and external are the isolate's, not the
 * process's; external holds the WebAssembly memories, which only grow). The pool replaces a worker over its bound.
 */
const memory = () => {
  const m = process.memoryUsage();
  return m.heapTotal + m.external;
};

/** This thread's /proc stat file, where its CPU time is (Linux); the pool reads it during a decode. */
function ownStatFile(): string | undefined {
  try {
    return `/proc/${readlinkSync('/proc/thread-self')}/stat`;
  } catch {
    return undefined;
  }
}

const errorOf = (e: unknown, code: 'EXTRACTION_FAILED' | 'MODEL_UNAVAILABLE') =>
  BiometricError.is(e) ? e.toJSON() : { code, message: String((e as Error).message ?? e) };

async function main() {
  let runner: ModelRunner;
  try {
    await enableFastJpegNode();
    // The native runner is imported only when chosen: a wasm worker never loads onnxruntime-node.
    runner =
      backend === 'native'
        ? await (await import('../src/extraction/node-native-runner.js')).OrtNodeRunner.create({
            loadModel: nodeModelLoader(modelsDir),
          })
        : await OrtWebRunner.create({ loadModel: nodeModelLoader(modelsDir) });
  } catch (e) {
    port.postMessage({ type: 'init-error', error: errorOf(e, 'MODEL_UNAVAILABLE') } satisfies WorkerReply);
    return;
  }
  // The voice model is optional: without it, voice jobs fail with MODEL_UNAVAILABLE and faces keep working.
  const voice = await OrtVoiceRunner.create({ loadModel: nodeModelLoader(modelsDir) }).catch(
    (e: unknown) => e as Error,
  );
  // The job being run (one at a time): its decode's end is reported, so the pool can hold it to its budget.
  let current: number | undefined;
  observeDecodes(() => {
    if (current !== undefined) port.postMessage({ type: 'decoded', id: current } satisfies WorkerReply);
  });
  port.on('message', async (job: WorkerJob) => {
    current = job.id;
    try {
      if (job.type === 'voice') {
        if (voice instanceof Error) throw voice;
        const result = await analyseVoice(voice, job.bytes, job.opts);
        port.postMessage({ type: 'result', id: job.id, result, memory: memory() } satisfies WorkerReply);
        return;
      }
      if (job.type === 'token') {
        const png = await renderTokenImage(job.bytes, job.landmarks);
        port.postMessage({ type: 'result', id: job.id, result: png, memory: memory() } satisfies WorkerReply, [
          png.buffer as ArrayBuffer,
        ]);
        return;
      }
      const result = await analyseImage(runner, job.bytes, job.opts);
      const transfer: ArrayBuffer[] = [];
      if (result.tokenImage) transfer.push(result.tokenImage.buffer as ArrayBuffer);
      port.postMessage({ type: 'result', id: job.id, result, memory: memory() } satisfies WorkerReply, transfer);
    } catch (e) {
      port.postMessage({
        type: 'error',
        id: job.id,
        error: errorOf(e, 'EXTRACTION_FAILED') as { code: BiometricError['code']; message: string },
        memory: memory(),
      } satisfies WorkerReply);
    }
  });
  port.postMessage({ type: 'ready', cpuStat: ownStatFile() } satisfies WorkerReply);
}

void main();
