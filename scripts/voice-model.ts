/**
 * `npm run voice-model [-- --from pretrained.pt]`: builds the speaker encoder's ONNX from Resemblyzer's original
 * checkpoint, checks it and writes it where the service loads it. Without --from the checkpoint is downloaded
 * from the commit pinned in wasm/models/voice-manifest.json (`download`), and the model it converts to must be
 * the pinned one, bit for bit. Nothing in a checkpoint is executed: it is read by a data-only pickle reader
 * (scripts/voice-model/pickle.ts). `npm install` runs the download through scripts/fetch-voice-model.mjs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VOICE_MODEL_FILE } from '../src/extraction/ort-voice-runner.js';
import manifest from '../wasm/models/voice-manifest.json' with { type: 'json' };
import { checkModel, convertCheckpoint, installModel, sha256Hex, TOLERANCE } from './voice-model/build.js';
import { downloadCheckpoint, DownloadFailed } from './voice-model/download.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_OUT = join(root, 'wasm', 'models', VOICE_MODEL_FILE);
const DEFAULT_TEST_VECTOR = join(root, '..', 'shared', 'models', 'voice');
const pin = manifest.download;

/** Exit code when the checkpoint could not be downloaded (offline, refused, timed out): the caller says what to do. */
const EXIT_DOWNLOAD_FAILED = 3;

const HELP = `Usage: npm run voice-model [-- --from FILE] [--out FILE] [--test-vector DIR]
                                [--url URL] [--sha256 HEX] [--timeout SECONDS]

Builds the GE2E speaker encoder (${VOICE_MODEL_FILE}) from Resemblyzer's checkpoint pretrained.pt
(Apache-2.0, Copyright 2019 Resemble.AI; in the resemblyzer Python package, resemblyzer/pretrained.pt, and
in the resemble-ai/Resemblyzer repository). PyTorch's zip and legacy checkpoint formats are read without
Python and without running anything in the file (only a state_dict's data is accepted).

Without --from, the checkpoint is downloaded from
  ${pin.url}
(at most ${pin.timeoutSeconds} s), and the model it converts to must have the pinned SHA-256 ${pin.modelSha256}
(Resemblyzer's published weights): anything else is refused and nothing is written.

The model is checked before it is written: it must embed the built-in reference input as the shipped model
does, and the test vector (ref_in.f32 -> ref_out.f32) within ${TOLERANCE} where one is found.

Options:
  --from FILE          a checkpoint on disk, instead of the download
  --out FILE           where to write the model (default wasm/models/${VOICE_MODEL_FILE}, where BIMS loads it;
                       elsewhere, name it in BIMS_VOICE_MODEL)
  --test-vector DIR    folder with ref_in.f32 and ref_out.f32 (default ../shared/models/voice/ when present)
  --url URL            download from this address instead (a mirror: the model must still be the pinned one)
  --sha256 HEX         the SHA-256 the downloaded checkpoint must have${pin.checkpointSha256 ? ` (default ${pin.checkpointSha256})` : ''}
  --timeout SECONDS    give up the download after this long (default ${pin.timeoutSeconds})
  -h, --help           show this help

Exit code 0 when the model was written; 1 when the checkpoint cannot be read, is not the pinned one, or the
model fails its check (nothing is written then); 2 for bad options; ${EXIT_DOWNLOAD_FAILED} when the download failed
(nothing is written: fetch the file where there is internet and use --from).`;

type Options = { from?: string; out?: string; 'test-vector'?: string; url?: string; sha256?: string; timeout?: string };

/** The checkpoint's bytes and where they came from (for the README), or an exit code. */
async function checkpointOf(args: Options): Promise<{ bytes: Uint8Array; provenance: string } | number> {
  if (args.from) {
    const from = resolve(args.from);
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(from));
    } catch (error) {
      console.error(`voice-model: cannot read ${from}: ${(error as Error).message}`);
      return 1;
    }
    return { bytes, provenance: `${basename(from)} (sha256 ${sha256Hex(bytes)})` };
  }
  const url = args.url ?? pin.url;
  try {
    const { bytes, sha256 } = await downloadCheckpoint(
      {
        url,
        sha256: args.sha256 ?? pin.checkpointSha256,
        maxBytes: pin.maxBytes,
        timeoutMs: Number(args.timeout ?? pin.timeoutSeconds) * 1000,
        idleMs: Math.min(Number(args.timeout ?? pin.idleSeconds), pin.idleSeconds) * 1000,
      },
      (line) => console.log(`voice-model: ${line}`),
    );
    return { bytes, provenance: `${url} (sha256 ${sha256})` };
  } catch (error) {
    console.error(`voice-model: ${(error as Error).message}`);
    return error instanceof DownloadFailed ? EXIT_DOWNLOAD_FAILED : 1;
  }
}

async function main(): Promise<number> {
  let args: Options & { help?: boolean };
  try {
    args = parseArgs({
      options: {
        from: { type: 'string' },
        out: { type: 'string' },
        'test-vector': { type: 'string' },
        url: { type: 'string' },
        sha256: { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (args.help) {
    console.log(HELP);
    return 0;
  }
  const bad =
    args.timeout !== undefined && !(Number(args.timeout) > 0)
      ? '--timeout takes a number of seconds above 0'
      : args.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(args.sha256)
        ? '--sha256 takes 64 hexadecimal digits'
        : args.from && (args.url || args.sha256 || args.timeout)
          ? '--url, --sha256 and --timeout are for the download, not for --from'
          : null;
  if (bad) {
    console.error(`voice-model: ${bad}\n\n${HELP}`);
    return 2;
  }
  const out = resolve(args.out ?? DEFAULT_OUT);
  const vectorDir = args['test-vector'] ? resolve(args['test-vector']) : DEFAULT_TEST_VECTOR;
  if (args['test-vector'] && !existsSync(join(vectorDir, 'ref_in.f32'))) {
    console.error(`voice-model: ${vectorDir} holds no ref_in.f32`);
    return 2;
  }

  const checkpoint = await checkpointOf(args);
  if (typeof checkpoint === 'number') return checkpoint;
  let model: Uint8Array;
  try {
    const built = convertCheckpoint(checkpoint.bytes);
    model = built.model;
    console.log(`voice-model: read the checkpoint (${built.format} format), built the encoder (${model.length} bytes)`);
  } catch (error) {
    console.error(
      `voice-model: ${args.from ? resolve(args.from) : 'the download'} cannot be converted: ${(error as Error).message}`,
    );
    return 1;
  }
  const published = sha256Hex(model) === pin.modelSha256;
  if (!args.from && !published) {
    console.error(
      `voice-model: the downloaded checkpoint converts to a model with sha256 ${sha256Hex(model)}, not the pinned ${pin.modelSha256}: its weights are not Resemblyzer's published ones. Refusing it; nothing was written`,
    );
    return 1;
  }
  try {
    console.log(`voice-model: ${await checkModel(model, vectorDir)}`);
  } catch (error) {
    console.error(`voice-model: ${(error as Error).message}`);
    return 1;
  }
  console.log(
    published
      ? "voice-model: the weights are Resemblyzer's published ones (the model has the pinned sha256)"
      : "voice-model: the weights differ from Resemblyzer's published ones; accepted because the model reproduces the reference embedding",
  );
  installModel(out, model, checkpoint.provenance);
  console.log(
    `voice-model: wrote ${out}${out === DEFAULT_OUT ? ' (where BIMS loads it): voice is on at the next start' : ' (name it in BIMS_VOICE_MODEL)'}`,
  );
  return 0;
}

process.exitCode = await main();
