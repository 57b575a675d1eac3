/**
 * A small Prometheus registry: counters and histograms kept in memory, gauges read when scraped, written in
 * the text exposition format (version 0.0.4). Our own rather than prom-client, which reads Node's process
 * and perf_hooks at import: this one runs unchanged on Node, Deno and Workers (where each isolate counts its
 * own requests).
 */

type Labels = Readonly<Record<string, string>>;

/** One sample a gauge collector reports: its labels and value. */
export interface GaugeSample {
  labels?: Labels;
  value: number;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'histogram' | 'gauge';
  render(): Promise<string[]> | string[];
}

/** Label values escaped as the format says: backslash, double quote and line feed. */
const escapeValue = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (help: string) => help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function labelText(labels: Labels | undefined, extra?: [string, string]): string {
  const pairs = Object.entries(labels ?? {});
  if (extra) pairs.push(extra);
  return pairs.length ? `{${pairs.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(',')}}` : '';
}

/** Numbers as the format writes them: +Inf, -Inf, NaN, or the shortest decimal. */
const numberText = (n: number) =>
  Number.isNaN(n) ? 'NaN' : n === Infinity ? '+Inf' : n === -Infinity ? '-Inf' : String(n);

/** A label set as a stable map key (label order as given by the caller, which is always the declared order). */
const keyOf = (names: readonly string[], labels: Labels) => JSON.stringify(names.map((n) => labels[n] ?? ''));

class Counter<L extends string> {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(private readonly labelNames: readonly L[]) {}

  inc(labels: Record<L, string>, by = 1): void {
    this.series(labels).value += by;
  }

  /**
   * The series of one label set, to count on directly (`.value += 1`): a caller that keeps it spares the label
   * key made on every count. It is written (at 0) from then on.
   */
  series(labels: Record<L, string>): { value: number } {
    const key = keyOf(this.labelNames, labels);
    let entry = this.values.get(key);
    if (!entry) {
      entry = { labels: pick(this.labelNames, labels), value: 0 };
      this.values.set(key, entry);
    }
    return entry;
  }

  lines(name: string): string[] {
    return [...this.values.values()].map((e) => `${name}${labelText(e.labels)} ${numberText(e.value)}`);
  }
}

class Histogram<L extends string> {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    private readonly labelNames: readonly L[],
    private readonly buckets: readonly number[],
  ) {}

  observe(labels: Record<L, string>, value: number): void {
    this.observer(labels)(value);
  }

  /** Observes values of one label set: a caller that keeps it spares the label key made on every observation. */
  observer(labels: Record<L, string>): (value: number) => void {
    const key = keyOf(this.labelNames, labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: pick(this.labelNames, labels), counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    const { buckets } = this;
    const series = entry;
    return (value) => {
      // Counts per bucket are kept non-cumulative and summed when written.
      const index = buckets.findIndex((upper) => value <= upper);
      if (index >= 0) series.counts[index]! += 1;
      series.sum += value;
      series.count += 1;
    };
  }

  lines(name: string): string[] {
    const out: string[] = [];
    for (const e of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((upper, i) => {
        cumulative += e.counts[i]!;
        out.push(`${name}_bucket${labelText(e.labels, ['le', numberText(upper)])} ${cumulative}`);
      });
      out.push(`${name}_bucket${labelText(e.labels, ['le', '+Inf'])} ${e.count}`);
      out.push(`${name}_sum${labelText(e.labels)} ${numberText(e.sum)}`);
      out.push(`${name}_count${labelText(e.labels)} ${e.count}`);
    }
    return out;
  }
}

function pick(names: readonly string[], labels: Labels): Labels {
  return Object.fromEntries(names.map((n) => [n, labels[n] ?? '']));
}

/** Metric families in registration order, written as one text exposition. */
export class PrometheusRegistry {
  private readonly families: Family[] = [];

  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    const counter = new Counter(labelNames);
    this.families.push({ name, help, type: 'counter', render: () => counter.lines(name) });
    return counter;
  }

  histogram<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: readonly number[],
  ): Histogram<L> {
    const histogram = new Histogram(labelNames, buckets);
    this.families.push({ name, help, type: 'histogram', render: () => histogram.lines(name) });
    return histogram;
  }

  /**
   * A family whose samples are read when scraped (pool sizes, gallery size, a pool's own job counters), so
   * there is nothing to keep in step: a gauge, or a counter kept by someone else.
   */
  collected(
    name: string,
    help: string,
    type: 'gauge' | 'counter',
    collect: () => Promise<GaugeSample[]> | GaugeSample[],
  ): void {
    this.families.push({
      name,
      help,
      type,
      render: async () => (await collect()).map((s) => `${name}${labelText(s.labels)} ${numberText(s.value)}`),
    });
  }

  /** The text exposition: HELP and TYPE for every family, then its samples. */
  async render(): Promise<string> {
    const out: string[] = [];
    for (const family of this.families) {
      out.push(
        `# HELP ${family.name} ${escapeHelp(family.help)}`,
        `# TYPE ${family.name} ${family.type}`,
        ...(await family.render()),
      );
    }
    return out.join('\n') + '\n';
  }
}

/** The media type of the text exposition format. */
export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
