// The supervisor npm start uses for its children (sidecar, dashboard), on a real forked child: a crash is
// followed by a new start, a clean exit (a requested stop) is not, and stop() ends the child.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { superviseChild } from '../../src/runtime/supervised-child.js';

const dir = mkdtempSync(join(tmpdir(), 'bims-supervised-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A child that counts its starts in a file, reports ready, then exits with the code the first start is told. */
const entry = join(dir, 'child.mjs');
writeFileSync(
  entry,
  `
import { appendFileSync, readFileSync } from 'node:fs';
appendFileSync(process.env.STARTS, 'x');
process.send({ type: 'ready', url: 'http://127.0.0.1:1' });
const first = readFileSync(process.env.STARTS, 'utf8').length === 1;
if (first) setTimeout(() => process.exit(Number(process.env.EXIT_WITH)), 50);
else setInterval(() => {}, 1000);
`,
);

async function run(exitWith: string) {
  const starts = join(dir, `starts-${exitWith}`);
  writeFileSync(starts, '');
  const lines: string[] = [];
  const child = await superviseChild({
    name: 'test child',
    entry,
    execArgv: [],
    env: () => ({ ...process.env, STARTS: starts, EXIT_WITH: exitWith }),
    meanwhile: 'nothing',
    onReady: () => {},
    log: createLogger('info', (line) => lines.push(line)),
  });
  // Until the supervisor has decided: a second start (the restart comes 1 s after the crash), or its word that the
  // child stopped for good. Bounded, no time asserted: a supervisor that decides neither fails the assertions below.
  const messages = () => lines.map((l) => JSON.parse(l).message as string);
  const started = () => readFileSync(starts, 'utf8').length;
  for (const until = Date.now() + 30_000; Date.now() < until; ) {
    if (started() >= 2 || messages().includes('the test child stopped')) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await child.stop();
  return { starts: started(), messages: messages() };
}

describe('superviseChild', () => {
  it('starts a crashed child again', async () => {
    const { starts, messages } = await run('3');
    expect(starts).toBe(2);
    expect(messages).toContain('the test child exited; starting it again');
  });

  it('leaves a child that exited cleanly stopped', async () => {
    const { starts, messages } = await run('0');
    expect(starts).toBe(1);
    expect(messages).toEqual(['the test child stopped']);
  });
});
