// `npm run eval`: the `bims eval` command (src/runtime/commands/eval.ts). From the repository, the native
// backend's onnxruntime-node is installed in tools/bench first, as `npm run native-backend` does.
import { ensureTool } from './tool.mjs';

const backend = process.argv.indexOf('--backend');
if (backend >= 0 && process.argv[backend + 1] === 'native') ensureTool('bench');
await import('../src/runtime/commands/eval.js');
