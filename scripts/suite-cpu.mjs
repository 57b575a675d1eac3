#!/usr/bin/env node
// `npm run test:cpu -- FILE`: the CPU seconds and wall seconds of a run logged with BIMS_TEST_CPU_LOG=FILE
// (test/support/setup-cpu-log.ts), summed per project, with the files that cost most. JSON on stdout.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const file = process.argv[2];
if (!file) {
  console.error('usage: npm run test:cpu -- FILE (a log written by a run with BIMS_TEST_CPU_LOG=FILE)');
  process.exit(2);
}
const lines = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line));
const projects = {};
for (const { project, cpuSeconds, wallSeconds } of lines) {
  const p = (projects[project || '?'] ??= { files: 0, cpuSeconds: 0, wallSeconds: 0 });
  p.files++;
  p.cpuSeconds += cpuSeconds;
  p.wallSeconds += wallSeconds;
}
const round = (n) => Math.round(n * 10) / 10;
for (const p of Object.values(projects)) {
  p.cpuSeconds = round(p.cpuSeconds);
  p.wallSeconds = round(p.wallSeconds);
}
const total = lines.reduce((sum, l) => sum + l.cpuSeconds, 0);
const costliest = [...lines]
  .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
  .slice(0, 20)
  .map((l) => ({
    file: relative(process.cwd(), l.file),
    project: l.project,
    cpuSeconds: l.cpuSeconds,
    wallSeconds: l.wallSeconds,
  }));
console.log(JSON.stringify({ files: lines.length, cpuSeconds: round(total), projects, costliest }, null, 1));
