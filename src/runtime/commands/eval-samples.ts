// Subjects enrolled with several photos (`npm run eval -- --samples-per-subject 2,3,4`, docs/calibration.md):
// each identity is enrolled as groups of k of its photos and probed with its other photos (genuine) and every
// photo of the other identities (impostor). A subject's score against a probe is computed from its k cosines
// by each candidate rule; the service's rule (src/biometrics/subject-score.ts) is the best cosine scored as k
// comparisons, whose measured FAR is set beside the FAR its scores claim.
import type { Calibration } from '../../biometrics/calibration.js';
import { subjectScore } from '../../biometrics/subject-score.js';
import { cosineInt8 } from '../../biometrics/template.js';
import { checkFar, type FarCheck } from './calibration-table.js';
import { eer, tarAtFar, type Sample } from './eval-lib.js';

/** Cosines of every pair of enrolled samples, row-major (n x n). */
export function cosineMatrix(ok: Sample[]): Float32Array {
  const n = ok.length;
  const m = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    m[i * n + i] = 1;
    for (let j = i + 1; j < n; j++) m[i * n + j] = m[j * n + i] = cosineInt8(ok[i]!.q!, ok[j]!.q!);
  }
  return m;
}

/** A rule: a subject's similarity from its samples' cosines (and their qualities, 0..100). */
type Rule = (cosines: number[], qualities: number[]) => number;
const top = (cs: number[], n: number) => [...cs].sort((a, b) => b - a).slice(0, n);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const RULES: Record<string, Rule> = {
  /** One photo enrolled (the group's first): the baseline the others must beat. */
  oneSample: (cs) => cs[0]!,
  max: (cs) => Math.max(...cs),
  meanOfTopTwo: (cs) => mean(top(cs, 2)),
  qualityWeightedMean: (cs, qs) =>
    cs.reduce((a, c, i) => a + c * Math.max(1, qs[i]!), 0) / qs.reduce((a, q) => a + Math.max(1, q), 0),
  meanOfAll: mean,
};

/** Deterministic pseudo-random numbers in [0, 1) (the groups are the same on every run). */
function stream(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

/** Up to `perIdentity` groups of k distinct samples (indices into ok) of each identity with more than k samples. */
export function enrolmentGroups(ok: Sample[], k: number, perIdentity: number, seed = 31): [string, number[]][] {
  const next = stream(seed + k);
  const byId = new Map<string, number[]>();
  ok.forEach((s, i) => byId.set(s.identity, [...(byId.get(s.identity) ?? []), i]));
  const groups: [string, number[]][] = [];
  for (const [id, members] of byId) {
    if (members.length <= k) continue;
    const seen = new Set<string>();
    for (let t = 0; t < perIdentity * 4 && seen.size < perIdentity; t++) {
      const shuffled = [...members].sort(() => next() - 0.5);
      const g = shuffled.slice(0, k).sort((a, b) => a - b);
      if (seen.has(g.join())) continue;
      seen.add(g.join());
      groups.push([id, g]);
    }
  }
  return groups;
}

interface RuleFigures {
  eer: number;
  tarAtFar1e2: number;
  tarAtFar1e3: number;
  tarAtFar1e4: number;
  rank1: number;
}

export interface SamplesFigures {
  samplesPerSubject: number;
  groups: number;
  genuine: number;
  impostor: number;
  rules: Record<string, RuleFigures>;
  /** The service's subject score: claimed vs measured FAR, and the share of genuine comparisons accepted. */
  service: { far: FarCheck[]; tarAt: Record<string, number> };
}

/**
 * Figures of every rule for subjects of k samples (`serviceOnly`: the service rule's FAR and TAR alone, as the
 * calibration check needs).
 */
export function samplesFigures(
  ok: Sample[],
  m: Float32Array,
  k: number,
  calibration: Calibration,
  serviceOnly = false,
): SamplesFigures {
  const n = ok.length;
  const groups = enrolmentGroups(ok, k, 40);
  const rules = serviceOnly
    ? []
    : Object.entries(RULES).filter(
        ([name]) => name !== 'qualityWeightedMean' || ok.every((s) => s.quality !== undefined),
      );
  const gen = new Map(rules.map(([name]) => [name, [] as number[]]));
  const imp = new Map(rules.map(([name]) => [name, [] as number[]]));
  const serviceGen: number[] = [],
    serviceImp: number[] = [];
  for (const [id, g] of groups) {
    const qs = g.map((i) => ok[i]!.quality ?? 0);
    for (let p = 0; p < n; p++) {
      if (g.includes(p)) continue;
      const cs = g.map((i) => m[i * n + p]!);
      const genuine = ok[p]!.identity === id;
      for (const [name, rule] of rules) (genuine ? gen : imp).get(name)!.push(rule(cs, qs));
      let best = cs[0]!;
      for (const c of cs) if (c > best) best = c;
      (genuine ? serviceGen : serviceImp).push(subjectScore(calibration.cosineToScore(best), k));
    }
  }
  const rank = rules.length ? rank1Of(ok, m, k, rules) : {};
  const figures: Record<string, RuleFigures> = {};
  for (const [name] of rules) {
    const G = gen.get(name)!,
      I = imp.get(name)!;
    figures[name] = {
      eer: eer(G, I),
      tarAtFar1e2: tarAtFar(G, I, 1e-2),
      tarAtFar1e3: tarAtFar(G, I, 1e-3),
      tarAtFar1e4: tarAtFar(G, I, 1e-4),
      rank1: rank[name]!,
    };
  }
  const tarAt: Record<string, number> = {};
  for (const t of [36, 48, 60]) tarAt[t] = serviceGen.filter((s) => s >= t).length / serviceGen.length;
  return {
    samplesPerSubject: k,
    groups: groups.length,
    genuine: serviceGen.length,
    impostor: serviceImp.length,
    rules: figures,
    service: { far: checkFar(Float64Array.from(serviceImp), [36, 48, 60]), tarAt },
  };
}

/** Rank-1 over 50 galleries, each holding one random group of k samples per identity; probes are the rest. */
function rank1Of(ok: Sample[], m: Float32Array, k: number, rules: [string, Rule][]): Record<string, number> {
  const n = ok.length;
  const hits: Record<string, number> = Object.fromEntries(rules.map(([name]) => [name, 0]));
  let probes = 0;
  for (let trial = 0; trial < 50; trial++) {
    const gallery = enrolmentGroups(ok, k, 1, 1000 + trial);
    const enrolled = new Set(gallery.flatMap(([, g]) => g));
    const present = new Set(gallery.map(([id]) => id));
    for (let p = 0; p < n; p++) {
      if (enrolled.has(p) || !present.has(ok[p]!.identity)) continue;
      probes++;
      for (const [name, rule] of rules) {
        let best = -Infinity,
          who = '';
        for (const [id, g] of gallery) {
          const v = rule(
            g.map((i) => m[i * n + p]!),
            g.map((i) => ok[i]!.quality ?? 0),
          );
          if (v > best) [best, who] = [v, id];
        }
        if (who === ok[p]!.identity) hits[name]!++;
      }
    }
  }
  return Object.fromEntries(Object.entries(hits).map(([name, h]) => [name, probes ? h / probes : NaN]));
}

/** The figures as printed lines. */
export function samplesTable(all: SamplesFigures[]): string[] {
  const lines: string[] = [];
  for (const f of all) {
    lines.push(
      `subjects of ${f.samplesPerSubject} samples: ${f.groups} enrolments, ${f.genuine} genuine / ${f.impostor} impostor comparisons`,
    );
    for (const [name, r] of Object.entries(f.rules))
      lines.push(
        `  ${name.padEnd(20)} EER ${(r.eer * 100).toFixed(2).padStart(5)}%  TAR@1e-2 ${r.tarAtFar1e2.toFixed(3)}  TAR@1e-3 ${r.tarAtFar1e3.toFixed(3)}  TAR@1e-4 ${r.tarAtFar1e4.toFixed(3)}  rank-1 ${r.rank1.toFixed(4)}`,
      );
    const s = f.service;
    lines.push(
      `  service rule (best sample scored as ${f.samplesPerSubject} comparisons): ` +
        s.far
          .map(
            (c) =>
              `score ${c.score}: claimed FAR ${c.claimedFar.toExponential(0)}, measured ${c.measuredFar.toExponential(2)}, TAR ${s.tarAt[c.score]!.toFixed(3)}`,
          )
          .join('; '),
    );
  }
  return lines;
}
