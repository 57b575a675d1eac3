/** Structured JSON logs, one object per line. Callers pass facts, never bodies, passwords or tokens. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const levels = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof levels)[number];

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
  const runtime = globalThis as { process?: { on?: (event: string, listener: () => void) => void }; navigator?: { userAgent?: string } };
  if (typeof runtime.process?.on !== 'function' || runtime.navigator?.userAgent === 'Cloudflare-Workers') return (line) => console.log(line);
  let pending: string[] = [];
  const flush = () => {
    if (!pending.length) return;
    const lines = pending;
    pending = [];
    console.log(lines.join('\n'));
  };
  runtime.process.on('exit', flush);
  return (line) => {
    if (pending.push(line) === 1) setTimeout(flush, 0);
  };
}

/** A logger writing JSON lines through `write` (batched console.log by default) at or above `level`. */
export function createLogger(level: LogLevel, write: (line: string) => void = consoleWriter()): Logger {
  const threshold = levels.indexOf(level);
  const at = (name: Exclude<LogLevel, 'silent'>) => (message: string, fields: Record<string, unknown> = {}) => {
    if (levels.indexOf(name) < threshold) return;
    // The line's own keys come first and cannot be overwritten by a field of the same name.
    const own = { time: new Date().toISOString(), level: name, message };
    write(JSON.stringify(Object.assign({ ...own }, fields, own)));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
