/**
 * `npm run voice-model -- --from pretrained.pt`: builds the speaker encoder's ONNX from Resemblyzer's original
 * checkpoint, checks it and writes it where the service loads it. Nothing in the checkpoint is executed: it is
 * read by a data-only pickle reader (scripts/voice-model/pickle.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { OrtVoiceRunner, VOICE_MODEL_FILE } from '../src/extraction/ort-voice-runner.js';
import { readCheckpoint } from './voice-model/torch-checkpoint.js';
import { resemblyzerWeights } from './voice-model/resemblyzer.js';
import { ge2eOnnx } from './voice-model/ge2e-onnx.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_OUT = join(root, 'wasm', 'models', VOICE_MODEL_FILE);
const DEFAULT_TEST_VECTOR = join(root, '..', 'shared', 'models', 'voice');
/** Largest difference allowed between the model's output and the test vector's. */
const TOLERANCE = 1e-4;

const HELP = `Usage: npm run voice-model -- --from FILE [--out FILE] [--test-vector DIR]

Builds the GE2E speaker encoder (${VOICE_MODEL_FILE}) from Resemblyzer's checkpoint pretrained.pt
(Apache-2.0, Copyright 2019 Resemble.AI; in the resemblyzer Python package, resemblyzer/pretrained.pt, and
in the resemble-ai/Resemblyzer repository). PyTorch's zip and legacy checkpoint formats are read without
Python and without running anything in the file (only a state_dict's data is accepted).

The model is checked before it is written: it must embed the built-in reference input as the shipped model
does, and the test vector (ref_in.f32 -> ref_out.f32) within ${TOLERANCE} where one is found.

Options:
  --from FILE          the checkpoint (required)
  --out FILE           where to write the model (default wasm/models/${VOICE_MODEL_FILE}, where BIMS loads it;
                       elsewhere, name it in BIMS_VOICE_MODEL)
  --test-vector DIR    folder with ref_in.f32 and ref_out.f32 (default ../shared/models/voice/ when present)
  -h, --help           show this help

Exit code 0 when the model was written, 1 when the checkpoint cannot be read or the model fails its check
(nothing is written then), 2 for bad options.`;

const f32 = (file: string) => {
  const b = readFileSync(file);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
};

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      options: {
        from: { type: 'string' },
        out: { type: 'string' },
        'test-vector': { type: 'string' },
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
  if (!args.from) {
    console.error(`voice-model: --from is required\n\n${HELP}`);
    return 2;
  }
  const from = resolve(args.from);
  const out = resolve(args.out ?? DEFAULT_OUT);
  const vectorDir = args['test-vector'] ? resolve(args['test-vector']) : DEFAULT_TEST_VECTOR;
  if (args['test-vector'] && !existsSync(join(vectorDir, 'ref_in.f32'))) {
    console.error(`voice-model: ${vectorDir} holds no ref_in.f32`);
    return 2;
  }

  let model: Uint8Array;
  const checkpoint = new Uint8Array(readFileSync(from));
  const sha256 = createHash('sha256').update(checkpoint).digest('hex');
  try {
    const { object, format } = readCheckpoint(checkpoint);
    model = ge2eOnnx(
      resemblyzerWeights(object),
      `resemble-ai/Resemblyzer ${basename(from)} (sha256 ${sha256}, PyTorch ${format} format) converted by BIMS scripts/voice-model.ts`,
    );
    console.log(`voice-model: read ${basename(from)} (${format} format), built the encoder (${model.length} bytes)`);
  } catch (error) {
    console.error(`voice-model: ${from} cannot be converted: ${(error as Error).message}`);
    return 1;
  }

  let runner: OrtVoiceRunner;
  try {
    runner = await OrtVoiceRunner.create({ loadModel: async () => model });
  } catch (error) {
    console.error(`voice-model: the converted model fails its check, nothing written: ${(error as Error).message}`);
    return 1;
  }
  try {
    if (existsSync(join(vectorDir, 'ref_in.f32')) && existsSync(join(vectorDir, 'ref_out.f32'))) {
      const input = f32(join(vectorDir, 'ref_in.f32')),
        expected = f32(join(vectorDir, 'ref_out.f32'));
      const got = await runner.embed(input, input.length / (160 * 40));
      let max = got.length === expected.length ? 0 : Infinity;
      for (let i = 0; i < expected.length && max < Infinity; i++) max = Math.max(max, Math.abs(got[i]! - expected[i]!));
      if (!(max <= TOLERANCE)) {
        console.error(
          `voice-model: the converted model differs from the test vector in ${vectorDir} by ${max.toPrecision(3)} (more than ${TOLERANCE}): nothing written`,
        );
        return 1;
      }
      console.log(
        `voice-model: test vector ${join(vectorDir, 'ref_out.f32')} reproduced (max difference ${max.toPrecision(3)})`,
      );
    } else {
      console.log(`voice-model: no test vector in ${vectorDir}; the built-in reference embedding was reproduced`);
    }
  } finally {
    await runner.release();
  }

  const tmp = `${out}.tmp`;
  writeFileSync(tmp, model);
  renameSync(tmp, out);
  writeFileSync(
    out.replace(/\.onnx$/, '') + '.README.md',
    `# ${basename(out)}\n\nGE2E speaker encoder built by \`npm run voice-model\` from ${basename(from)} (sha256 ${sha256}).\n\nWeights: resemble-ai/Resemblyzer pretrained.pt, Apache License 2.0, Copyright 2019 Resemble.AI.\n`,
  );
  console.log(
    `voice-model: wrote ${out}${out === DEFAULT_OUT ? ' (where BIMS loads it)' : ' (name it in BIMS_VOICE_MODEL)'}`,
  );
  return 0;
}

process.exitCode = await main();
