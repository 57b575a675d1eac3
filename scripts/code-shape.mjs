#!/usr/bin/env node
// The shape of src/ in figures (issue 34): cycles, imports that climb the layers, exports no file imports (or
// only tests do), the longest files. `node scripts/code-shape.mjs` prints JSON; `--list` adds every name.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildGraph, cycles, listFiles, unusedExports } from './import-graph.mjs';
import { layerViolations } from './layers.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const list = process.argv.includes('--list');
const files = listFiles(root, ['src', 'test', 'scripts', 'bench', 'workers']);
const graph = buildGraph(root, files);
const isTest = (file) => !file.startsWith('src/') || file.endsWith('.test.ts');
const production = files.filter((file) => file.startsWith('src/') && !isTest(file));
const srcOnly = new Map([...graph].filter(([file]) => production.includes(file)));
const lines = (file) => readFileSync(`${root}/${file}`, 'utf8').split('\n').length - 1;

const valueCycles = cycles(srcOnly, (_from, i) => !i.typeOnly);
const allCycles = cycles(srcOnly);
const unused = unusedExports(graph, production);
const unusedBySrc = new Set(unusedExports(graph, production, (from) => !isTest(from)));
const testOnly = [...unusedBySrc].filter((entry) => !unused.includes(entry));
const upward = layerViolations(srcOnly);
const sizes = production.map((file) => [file, lines(file)]).sort((a, b) => b[1] - a[1]);

const figures = {
  srcFiles: production.length,
  srcLines: sizes.reduce((sum, [, n]) => sum + n, 0),
  cycles: {
    runtime: valueCycles.map((c) => c.length),
    withTypeImports: allCycles.map((c) => c.length),
  },
  upwardImports: upward.length,
  exportsWithNoImporter: unused.length,
  exportsOnlyTestsImport: testOnly.length,
  filesOver300: sizes.filter(([, n]) => n > 300).map(([f, n]) => `${f} ${n}`),
  files280to300: sizes.filter(([, n]) => n >= 280 && n <= 300).map(([f, n]) => `${f} ${n}`),
};
if (list) {
  Object.assign(figures, {
    cycleFiles: valueCycles,
    cycleFilesWithTypes: allCycles,
    upward,
    unused,
    testOnly,
  });
}
console.log(JSON.stringify(figures, null, 2));
