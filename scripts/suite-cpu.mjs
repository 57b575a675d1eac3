#!/usr/bin/env node
// `npm run test:cpu -- FILE`: the CPU seconds and wall seconds of a run logged with BIMS_TEST_CPU_LOG=FILE
// (test/support/setup-cpu-log.ts), summed per project, with the files that cost most, and the run's timeline:
// each worker's files in order (seconds from the first file's start), the time before each file that no file of
// that worker ran (its imports, the fork's start), and how long one, two or more files ran at once. JSON on stdout.
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

// The timeline, from the lines that say when they started and in which worker (older logs do not).
const timed = lines.filter((l) => l.startedAt && l.pid);
let timeline;
if (timed.length) {
  const t0 = Math.min(...timed.map((l) => l.startedAt));
  const workers = {};
  for (const l of [...timed].sort((a, b) => a.startedAt - b.startedAt)) {
    const w = (workers[l.pid] ??= { files: 0, busySeconds: 0, waitedSeconds: 0, runs: [] });
    const start = l.startedAt - t0;
    const end = start + l.wallSeconds;
    const previous = w.runs.at(-1);
    const gap = previous ? start - previous.end : start;
    w.files++;
    w.busySeconds += l.wallSeconds;
    w.waitedSeconds += gap;
    w.runs.push({
      start: round(start),
      end: round(end),
      gap: round(gap),
      cpu: l.cpuSeconds,
      file: `${l.project}:${relative(process.cwd(), l.file)}`,
    });
  }
  // How long n files ran at once, from the starts and ends of every file.
  const edges = timed.flatMap((l) => [
    [l.startedAt - t0, 1],
    [l.startedAt - t0 + l.wallSeconds, -1],
  ]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const atOnce = {};
  let running = 0;
  let at = 0;
  for (const [t, step] of edges) {
    atOnce[running] = (atOnce[running] ?? 0) + (t - at);
    running += step;
    at = t;
  }
  for (const w of Object.values(workers)) {
    w.busySeconds = round(w.busySeconds);
    w.waitedSeconds = round(w.waitedSeconds);
    w.endsAt = w.runs.at(-1).end;
  }
  timeline = {
    seconds: round(at),
    filesAtOnce: Object.fromEntries(Object.entries(atOnce).map(([n, s]) => [n, round(s)])),
    workers,
  };
}
console.log(JSON.stringify({ files: lines.length, cpuSeconds: round(total), projects, costliest, timeline }, null, 1));
