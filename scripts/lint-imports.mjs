// The import rules of `npm run lint` that Biome cannot state (scripts/lint.mjs runs this after Biome): the layers
// of scripts/layers.mjs, Node's built-ins only where Node runs, and no import cycle in src/. Prints each problem
// and exits 1 if there is one.
import { fileURLToPath } from 'node:url';
import { buildGraph, cycles, listFiles } from './import-graph.mjs';
import { layerViolations } from './layers.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const files = listFiles(root, ['src']).filter(
  (file) => !file.endsWith('.test.ts') && !file.startsWith('src/dashboard/public/'),
);
const graph = buildGraph(root, files);
const problems = layerViolations(graph);
// A cycle through value imports decides which module of it is evaluated first: never.
for (const cycle of cycles(graph, (_from, i) => !i.typeOnly)) problems.push(`import cycle: ${cycle.join(' -> ')}`);
// Through type imports too: a cycle of types is two areas that cannot be read, changed or tested one without
// the other (issue 34 took the last one, gateway service <-> capture registry, apart with capture-gateway.ts).
for (const cycle of cycles(graph)) problems.push(`type import cycle: ${cycle.join(' -> ')}`);
for (const problem of problems) console.error(`lint-imports: ${problem}`);
process.exit(problems.length > 0 ? 1 : 0);
