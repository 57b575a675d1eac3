/**
 * A progress bar for command-line jobs, drawn on one terminal line with a carriage return (no dependency:
 * the bar is a few characters). When the stream is not a terminal (CI logs, a pipe) a carriage return would
 * pile up as garbage, so a plain line is written at every tenth of the way instead.
 */

interface ProgressState {
  done: number;
  total: number;
  failed: number;
  /** Shown after the bar, e.g. the subject just handled. */
  label?: string | null;
}

interface Sink {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * @example
 * const bar = progressBar(process.stderr);
 * bar.update({ done: 3, total: 10, failed: 0, label: 'alice' });
 * bar.finish();
 */
export function progressBar(stream: Sink, options: { width?: number; minIntervalMs?: number } = {}) {
  const width = options.width ?? 30;
  const minInterval = options.minIntervalMs ?? 100;
  let lastDraw = 0;
  let lastTenth = -1;
  let drawn = false;
  let latest: ProgressState | null = null;

  const line = (s: ProgressState) => {
    const ratio = s.total > 0 ? Math.min(1, s.done / s.total) : 1;
    const filled = Math.round(ratio * width);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${s.done}/${s.total} ${String(Math.floor(ratio * 100)).padStart(3)}%`;
    const failed = s.failed ? ` failed ${s.failed}` : '';
    const text = `${bar}${failed}${s.label ? `  ${s.label}` : ''}`;
    return stream.columns ? text.slice(0, stream.columns - 1) : text;
  };

  return {
    /** Draw the new state (at most every `minIntervalMs` on a terminal, always for the last step). */
    update(state: ProgressState) {
      latest = state;
      if (stream.isTTY) {
        const now = Date.now();
        if (now - lastDraw < minInterval && state.done < state.total) return;
        lastDraw = now;
        // \x1b[K clears what a longer previous line left to the right.
        stream.write(`\r${line(state)}\x1b[K`);
        drawn = true;
        return;
      }
      const tenth = state.total > 0 ? Math.floor((state.done / state.total) * 10) : 10;
      if (tenth !== lastTenth) {
        lastTenth = tenth;
        stream.write(`${line(state)}\n`);
      }
    },
    /** Draw the final state and end the line. */
    finish() {
      if (stream.isTTY && latest) {
        stream.write(`\r${line(latest)}\x1b[K\n`);
      } else if (drawn) {
        stream.write('\n');
      }
    },
  };
}
