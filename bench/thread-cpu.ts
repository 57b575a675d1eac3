import { readdirSync, readFileSync } from 'node:fs';

/** CPU milliseconds (user + system) of each thread of this process, by thread id; empty where /proc is missing. */
export type ThreadCpu = Map<number, { name: string; ms: number }>;

const TICK_MS = 10; // USER_HZ is 100 on every Linux the benchmarks run on

/** Per-thread CPU time from /proc/self/task (Linux), to see where a benchmark's CPU goes. */
export function threadCpu(): ThreadCpu {
  const out: ThreadCpu = new Map();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // The thread name is in parentheses and may hold spaces; the fields after it are space separated.
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      out.set(Number(tid), { name, ms: (Number(f[11]) + Number(f[12])) * TICK_MS });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/**
 * CPU spent between two snapshots in milliseconds divided by `per`: the main thread, then each other thread
 * that used at least 2% of the total (the extraction pool's worker threads are the busiest; Node leaves its
 * threads unnamed, so they are told apart by thread id), then the rest together (V8's compiler and GC
 * helpers, libuv's pool).
 */
export function cpuByThread(before: ThreadCpu, after: ThreadCpu, per = 1): Record<string, number> {
  const spent: { key: string; ms: number }[] = [];
  for (const [tid, t] of after) {
    const ms = t.ms - (before.get(tid)?.ms ?? 0);
    if (ms > 0) spent.push({ key: tid === process.pid ? 'main' : `${t.name}#${tid}`, ms });
  }
  const total = spent.reduce((s, t) => s + t.ms, 0);
  const out: Record<string, number> = {};
  const round = (ms: number) => Math.round((ms / per) * 10) / 10;
  let rest = 0;
  for (const t of spent.sort((a, b) => b.ms - a.ms)) {
    if (t.key === 'main' || t.ms >= 0.02 * total) out[t.key] = round(t.ms);
    else rest += t.ms;
  }
  out.otherThreads = round(rest);
  return out;
}

/** This process's CPU time so far, user and system, in ms (every thread of it). */
export function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
