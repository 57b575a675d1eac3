/**
 * Structured logs: one JSON object per line for machines (files, pipes, log collectors), or one readable line
 * per entry on a terminal (BIMS_LOG_FORMAT). Callers pass facts, never bodies, passwords or tokens.
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const levels = ['debug', 'info', 'warn', 'error', 'silent'] as const;
type LogLevel = (typeof levels)[number];
/** `auto`: readable when standard output is a terminal, JSON lines otherwise. */
type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Lines written together, once per turn of the event loop, instead of one synchronous write per line (on Node,
 * standard output to a pipe or file is written synchronously: a request's log line held up its answer).
 * Only where timers outlive the request and the process says when it exits (Node, Deno); elsewhere (Workers,
 * whose isolate may stop once the answer is out) each line is written at once. Lines still waiting when the
 * process exits are written then.
 */
let sharedWriter: ((line: string) => void) | undefined;
function consoleWriter(): (line: string) => void {
  return (sharedWriter ??= batchedConsoleWriter());
}

function batchedConsoleWriter(): (line: string) => void {
  const runtime = globalThis as {
    process?: { on?: (event: string, listener: () => void) => void };
    navigator?: { userAgent?: string };
  };
  if (typeof runtime.process?.on !== 'function' || runtime.navigator?.userAgent === 'Cloudflare-Workers')
    return (line) => console.log(line);
  // Node's own stream where there is one: console.log formats its argument and takes a slower path to the
  // same stream (about a third of a request line's cost under load).
  const stdout = (runtime as { process?: { stdout?: { write?: (text: string) => unknown } } }).process?.stdout;
  const write =
    typeof stdout?.write === 'function'
      ? (text: string) => stdout.write!(text)
      : (text: string) => console.log(text.slice(0, -1));
  let pending = '';
  const flush = () => {
    if (!pending) return;
    const lines = pending;
    pending = '';
    write(lines);
  };
  runtime.process.on('exit', flush);
  return (line) => {
    if (!pending) setTimeout(flush, 0);
    pending += `${line}\n`;
  };
}

/**
 * A logger writing through `write` (batched console.log by default) at or above `level`, as JSON lines, or as
 * readable lines (`pretty`, or `auto` when the default writer's standard output is a terminal). A caller's own
 * `write` gets JSON under `auto`: it is a program reading the lines, not a person.
 */
export function createLogger(level: LogLevel, write?: (line: string) => void, format: LogFormat = 'json'): Logger {
  const threshold = levels.indexOf(level);
  const pretty = format === 'pretty' || (format === 'auto' && !write && stdoutIsTerminal());
  const render = pretty ? prettyRenderer(!write && stdoutIsTerminal() && colourAllowed()) : jsonLine;
  const out = write ?? consoleWriter();
  const at =
    (name: Exclude<LogLevel, 'silent'>) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (levels.indexOf(name) < threshold) return;
      out(render({ time: isoNow(), level: name, message }, fields));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The minute `isoNow` is in: its first millisecond and its text up to the seconds ("2026-11-26T20:31:"). */
let minuteStart = Number.NaN;
let minuteText = '';

/**
 * Now as `new Date().toISOString()` writes it, from the text of the current minute kept once: formatting a date
 * was a fifth of a request's log line, where two divisions and a template cost a tenth of that.
 */
export function isoNow(now = Date.now()): string {
  let into = now - minuteStart;
  if (!(into >= 0 && into < 60_000)) {
    minuteStart = now - (((now % 60_000) + 60_000) % 60_000);
    minuteText = new Date(minuteStart).toISOString().slice(0, 17);
    into = now - minuteStart;
  }
  const seconds = Math.floor(into / 1000);
  const millis = into % 1000;
  return `${minuteText}${seconds < 10 ? '0' : ''}${seconds}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

/** The process's logger as its configuration says (level and format). */
export function configuredLogger(config: { BIMS_LOG_LEVEL: LogLevel; BIMS_LOG_FORMAT: LogFormat }): Logger {
  return createLogger(config.BIMS_LOG_LEVEL, undefined, config.BIMS_LOG_FORMAT);
}

/**
 * The JSON line: the line's own keys come first and cannot be overwritten by a field of the same name. Written
 * as text around one stringify of the fields (one line per request: copying the fields into a new object
 * first cost as much as the rest of the line).
 */
function jsonLine(own: OwnFields, fields: Record<string, unknown>): string {
  if ('time' in fields || 'level' in fields || 'message' in fields)
    return JSON.stringify(Object.assign({ ...own }, fields, own));
  const head = `{"time":"${own.time}","level":"${own.level}","message":${JSON.stringify(own.message)}`;
  const rest = JSON.stringify(fields);
  return rest === '{}' ? `${head}}` : `${head},${rest.slice(1)}`;
}

interface OwnFields {
  time: string;
  level: Exclude<LogLevel, 'silent'>;
  message: string;
}

// Read through globalThis: the logger is part of the runtime-neutral core (Workers have neither).
type TerminalRuntime = {
  process?: { stdout?: { isTTY?: boolean }; env?: Record<string, string | undefined> };
  Deno?: { stdout?: { isTerminal?: () => boolean }; noColor?: boolean };
};

function stdoutIsTerminal(): boolean {
  const runtime = globalThis as TerminalRuntime;
  if (typeof runtime.Deno?.stdout?.isTerminal === 'function') return runtime.Deno.stdout.isTerminal();
  return runtime.process?.stdout?.isTTY === true;
}

/** Colours unless NO_COLOR is set (no-color.org) or the terminal is dumb. */
function colourAllowed(): boolean {
  const runtime = globalThis as TerminalRuntime;
  if (runtime.Deno?.noColor) return false;
  const env = runtime.process?.env ?? {};
  return !env.NO_COLOR && env.TERM !== 'dumb';
}

const LEVEL_COLOUR: Record<OwnFields['level'], string> = {
  debug: '\x1b[90m',
  info: '\x1b[36m',
  warn: '\x1b[33m',
  error: '\x1b[31m',
};

/**
 * `12:04:05.123 INFO  listening url=http://127.0.0.1:8080 database=pglite`: local time, level, message, then the
 * fields as key=value (strings bare unless they hold spaces or quotes, other values as JSON). A multi-line string
 * (a stack, a startup summary) follows on its own indented lines, so it reads as it was written.
 */
function prettyRenderer(colour: boolean): (own: OwnFields, fields: Record<string, unknown>) => string {
  const paint = (code: string, text: string) => (colour ? `${code}${text}\x1b[0m` : text);
  return (own, fields) => {
    const time = new Date(own.time);
    const clock =
      [time.getHours(), time.getMinutes(), time.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':') +
      `.${String(time.getMilliseconds()).padStart(3, '0')}`;
    const pairs: string[] = [];
    const blocks: string[] = [];
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined || key === 'time' || key === 'level' || key === 'message') continue;
      if (typeof value === 'string' && value.includes('\n')) {
        blocks.push(`  ${paint('\x1b[2m', `${key}:`)}\n${value.replace(/^/gm, '    ')}`);
        continue;
      }
      const text =
        typeof value === 'string'
          ? /^[^\s"'=]+$/.test(value)
            ? value
            : JSON.stringify(value)
          : (JSON.stringify(value) ?? String(value));
      pairs.push(`${paint('\x1b[2m', `${key}=`)}${text}`);
    }
    const head = `${paint('\x1b[2m', clock)} ${paint(LEVEL_COLOUR[own.level], own.level.toUpperCase().padEnd(5))} ${own.message}`;
    return [pairs.length ? `${head} ${pairs.join(' ')}` : head, ...blocks].join('\n');
  };
}
