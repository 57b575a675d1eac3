import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A Node process logging two lines the way the service's entries do (configuredLogger from the environment). */
const PROGRAM = `
import { loadConfig } from './src/config/config.ts';
import { configuredLogger } from './src/logger.ts';
const log = configuredLogger(loadConfig(process.env));
log.info('listening', { url: 'http://127.0.0.1:8080', database: 'pglite', docs: 'http://127.0.0.1:8080/docs' });
log.warn('voice is off', { reason: 'the speaker model was not found', fix: 'npm run voice-model -- --from pretrained.pt' });
`;

function run(env: Record<string, string>, onTerminal: boolean): string {
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', PROGRAM];
  const childEnv = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', TERM: 'xterm', ...env };
  if (!onTerminal) return execFileSync(node[0], node.slice(1), { cwd: root, env: childEnv, encoding: 'utf8' });
  // util-linux `script` runs the command on a pseudo-terminal, as an operator's shell would.
  const quoted = node.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  return execFileSync('script', ['-qec', quoted, '/dev/null'], { cwd: root, env: childEnv, encoding: 'utf8' }).replace(
    /\r/g,
    '',
  );
}

// eslint-disable-next-line no-control-regex
const stripColour = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');
const PRETTY_LINE =
  /^\d\d:\d\d:\d\d\.\d{3} INFO  listening url=http:\/\/127\.0\.0\.1:8080 database=pglite docs=http:\/\/127\.0\.0\.1:8080\/docs$/m;

describe('BIMS_LOG_FORMAT', () => {
  it('auto (the default) writes readable lines on a terminal and JSON lines into a pipe', () => {
    const terminal = run({}, true);
    expect(stripColour(terminal)).toMatch(PRETTY_LINE);
    expect(stripColour(terminal)).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN  voice is off reason="the speaker model was not found" fix="npm run voice-model -- --from pretrained.pt"$/m,
    );
    expect(terminal).toContain('\x1b['); // coloured levels on a terminal

    const piped = run({}, false)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(piped.map((line) => [line.level, line.message, line.url ?? line.reason])).toEqual([
      ['info', 'listening', 'http://127.0.0.1:8080'],
      ['warn', 'voice is off', 'the speaker model was not found'],
    ]);
  });

  it('json on a terminal and pretty into a pipe when asked; NO_COLOR leaves the terminal uncoloured', () => {
    expect(JSON.parse(run({ BIMS_LOG_FORMAT: 'json' }, true).trim().split('\n')[0])).toMatchObject({
      level: 'info',
      message: 'listening',
      database: 'pglite',
    });
    const piped = run({ BIMS_LOG_FORMAT: 'pretty' }, false);
    expect(piped).toMatch(PRETTY_LINE);
    expect(piped).not.toContain('\x1b['); // no colour codes in a file
    const plain = run({ NO_COLOR: '1' }, true);
    expect(plain).toMatch(PRETTY_LINE);
    expect(plain).not.toContain('\x1b[');
  });

  it('refuses a format it does not know, naming the variable', () => {
    expect(() => loadConfig({ BIMS_LOG_FORMAT: 'xml' })).toThrow(/BIMS_LOG_FORMAT/);
    expect(loadConfig({}).BIMS_LOG_FORMAT).toBe('auto');
  });
});

describe('pretty lines', () => {
  it("keep the entry's own time, level and message; quote strings with spaces; show other values as JSON; indent multi-line text", () => {
    const lines: string[] = [];
    const log = createLogger('debug', (line) => lines.push(line), 'pretty');
    log.error('unhandled exception', {
      message: 'spoofed',
      status: 500,
      ok: false,
      where: { op: 'createSubject' },
      absent: undefined,
      stack: 'Error: boom\n    at f (a.ts:1:1)',
    });
    log.debug('quiet', {});
    expect(lines[0].split('\n')).toEqual([
      expect.stringMatching(
        /^\d\d:\d\d:\d\d\.\d{3} ERROR unhandled exception status=500 ok=false where=\{"op":"createSubject"\}$/,
      ),
      '  stack:',
      '    Error: boom',
      '        at f (a.ts:1:1)',
    ]);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} DEBUG quiet$/);
  });

  it("a caller's own writer gets JSON under auto: a program reads those lines", () => {
    const lines: string[] = [];
    createLogger('info', (line) => lines.push(line), 'auto').info('request', { status: 200 });
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'info', message: 'request', status: 200 });
  });
});
