// Worker thread entry of the Node extraction pool: one set of onnxruntime-web sessions per worker, warmed
// before it reports ready. Holds no state between jobs and touches no database.
import { parentPort, workerData } from 'node:worker_threads';
import { BiometricError } from '../src/biometrics/errors.js';
import { analyseImage } from '../src/biometrics/face/pipeline.js';
import { enableFastJpegNode, nodeModelLoader } from '../src/extraction/node-models.js';
import { OrtWebRunner } from '../src/extraction/ort-web-runner.js';
import type { WorkerJob, WorkerReply } from '../src/extraction/node-protocol.js';

const port = parentPort!;
const { modelsDir } = (workerData ?? {}) as { modelsDir?: string };

async function main() {
  let runner: OrtWebRunner;
  try {
    await enableFastJpegNode();
    runner = await OrtWebRunner.create({ loadModel: nodeModelLoader(modelsDir) });
  } catch (e) {
    const err = BiometricError.is(e) ? e.toJSON() : { code: 'MODEL_UNAVAILABLE', message: String((e as Error).message ?? e) };
    port.postMessage({ type: 'init-error', error: err } satisfies WorkerReply);
    return;
  }
  port.on('message', async (job: WorkerJob) => {
    if (job.type === 'crash') process.exit(70); // test hook: simulates a worker dying mid-job
    try {
      const result = await analyseImage(runner, job.bytes, job.opts);
      const transfer: ArrayBuffer[] = [];
      if (result.tokenImage) transfer.push(result.tokenImage.buffer as ArrayBuffer);
      port.postMessage({ type: 'result', id: job.id, result } satisfies WorkerReply, transfer);
    } catch (e) {
      const error = BiometricError.is(e) ? e.toJSON() : { code: 'EXTRACTION_FAILED' as const, message: String((e as Error).message ?? e) };
      port.postMessage({ type: 'error', id: job.id, error } satisfies WorkerReply);
    }
  });
  port.postMessage({ type: 'ready' } satisfies WorkerReply);
}

void main();
