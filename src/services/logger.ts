/** Structured JSON logs, one object per line. Callers pass facts, never bodies, passwords or tokens. */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const levels = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof levels)[number];

/** A logger writing JSON lines through `write` (console.log by default) at or above `level`. */
export function createLogger(level: LogLevel, write: (line: string) => void = (line) => console.log(line)): Logger {
  const threshold = levels.indexOf(level);
  const at = (name: Exclude<LogLevel, 'silent'>) => (message: string, fields: Record<string, unknown> = {}) => {
    if (levels.indexOf(name) < threshold) return;
    // The line's own keys come first and cannot be overwritten by a field of the same name.
    const own = { time: new Date().toISOString(), level: name, message };
    write(JSON.stringify(Object.assign({ ...own }, fields, own)));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
