// 1:N across matcher threads: the same answer as one thread's scan (exact top-K merge), and changes made while
// searches run on the threads never disturb them: each answers for the gallery as it was when it started,
// while the next search sees the change. Real worker threads, real shared memory.
import { afterAll, describe, expect, it } from 'vitest';
import { MatcherPool } from './node-matcher-pool.js';
import { FaceGallery } from './face-gallery.js';
import { Gallery } from './gallery.js';
import { FACE_CALIBRATION } from './calibration.js';
import { subjectScore } from './subject-score.js';
import { cosineInt8, encodeTemplate } from './template.js';

const DIMS = 512;
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}
const randomRow = (r: () => number) => Int8Array.from({ length: DIMS }, () => (r() % 255) - 127);
/** A row close to `base` (same signs, perturbed): it matches base far better than random rows do. */
const near = (base: Int8Array, r: () => number) => base.map((v) => Math.max(-127, Math.min(127, v + (r() % 21) - 10)));

// minRows 0: every search goes to the threads, whatever the size of the gallery under test.
const pool = new MatcherPool(2, { minRows: 0 });
afterAll(() => pool.close());

function filled(n: number, seed: number, opts: { threads?: MatcherPool } = {}) {
  const g = new FaceGallery('t', DIMS, opts);
  const r = rng(seed);
  const rows: Int8Array[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(randomRow(r));
    g.add(`s${i % Math.ceil(n / 3)}`, rows[i]); // about three templates per subject
  }
  return { g, rows, r };
}

describe('matcher pool', () => {
  it('threaded search gives exactly the single-thread answer: order, cosines, topK, threshold, exclusions', async () => {
    const { g, rows, r } = filled(6001, 1, { threads: pool });
    expect(g.threaded).toBe(true);
    const probes = [near(rows[17], r), near(rows[6000], r), near(rows[3001], r), randomRow(r)];
    for (const probe of probes) {
      for (const opts of [
        { topK: 1 },
        { topK: 10 },
        { topK: 50 },
        { topK: 5, threshold: 30 },
        { topK: 5, exclude: new Set(['s17', 's0', 'nobody']) },
      ]) {
        const single = g.identify(probe, opts);
        const multi = await g.identifyAsync(probe, opts);
        expect(multi).toEqual(single);
        if (!('threshold' in opts)) expect(multi.length).toBeGreaterThan(0);
      }
    }
    // the near probes find their row's subject first
    expect((await g.identifyAsync(probes[0], { topK: 1 }))[0].subject).toBe(`s${17 % 2001}`);
    expect(
      (await g.identifyAsync(probes[1], { topK: 3, exclude: new Set([`s${6000 % 2001}`]) })).map((h) => h.subject),
    ).not.toContain(`s${6000 % 2001}`);
  });

  it('subjects of one to six samples scattered over the slices: the same candidates on 1, 2 and 3 threads, by the subject rule', async () => {
    const three = new MatcherPool(3, { minRows: 0 });
    try {
      const r = rng(11);
      const one = new FaceGallery('t', DIMS);
      const galleries = [
        one,
        new FaceGallery('t', DIMS, { threads: pool }),
        new FaceGallery('t', DIMS, { threads: three }),
      ];
      // 3,000 subjects; samples added in random order, so a subject's rows lie in different threads' slices
      const samples = new Map<string, Int8Array[]>();
      const base = Array.from({ length: 40 }, () => randomRow(r));
      for (let i = 0; i < 3000; i++) samples.set(`m${i}`, []);
      const order: string[] = [];
      for (const [subject, list] of samples) {
        const k = 1 + (r() % 6);
        for (let j = 0; j < k; j++) {
          // a quarter of the samples near one of 40 faces: many subjects compete near each probe
          list.push(r() % 4 === 0 ? near(base[r() % 40]!, r) : randomRow(r));
          order.push(subject);
        }
      }
      for (let i = order.length - 1; i > 0; i--) {
        const j = r() % (i + 1);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      const next = new Map<string, number>();
      for (const subject of order) {
        const j = next.get(subject) ?? 0;
        next.set(subject, j + 1);
        for (const g of galleries) g.add(subject, samples.get(subject)![j]!);
      }
      const mixed = [...samples.values()].map((l) => l.length);
      expect(new Set(mixed).size).toBe(6);
      let reordered = 0;
      for (let p = 0; p < 8; p++) {
        const probe = near(base[p]!, r);
        // the rule by brute force: best sample's cosine, scored for the subject's number of samples
        const brute = [...samples]
          .map(([subject, list]) => {
            const cosine = Math.max(...list.map((q) => cosineInt8(probe, q)));
            return { subject, cosine, score: subjectScore(FACE_CALIBRATION.cosineToScore(cosine), list.length) };
          })
          .sort((a, b) => b.score - a.score || b.cosine - a.cosine);
        const byCosine = [...brute].sort((a, b) => b.cosine - a.cosine);
        if (byCosine.slice(0, 20).some((b, i) => b.subject !== brute[i]!.subject)) reordered++;
        for (const opts of [{ topK: 1 }, { topK: 20 }, { topK: 100, threshold: 20 }]) {
          const single = one.identify(probe, opts);
          const expected = brute.filter((b) => b.score >= (opts.threshold ?? 0) - 1e-9).slice(0, opts.topK);
          expect(single.map((h) => h.subject)).toEqual(expected.map((b) => b.subject));
          single.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
          for (const g of galleries.slice(1)) expect(await g.identifyAsync(probe, opts)).toEqual(single);
        }
        // VERIFY gives every subject the score IDENTIFY gives it
        for (const h of one.identify(probe, { topK: 20 })) {
          for (const g of galleries) expect(g.verify(probe, h.subject)!.score).toBeCloseTo(h.score, 12);
        }
      }
      // the number of samples changed the order of the best 20 (the rule is not the best cosine's order)
      expect(reordered).toBeGreaterThan(0);
    } finally {
      await three.close();
    }
  });

  it('Gallery partitions take the threads too; template bytes in, same answer as on one thread', async () => {
    const gal = new Gallery({ threads: pool });
    const r = rng(9);
    const vs = Array.from({ length: 400 }, () => Float32Array.from({ length: DIMS }, () => (r() % 2001) / 1000 - 1));
    const tpl = (e: Float32Array) =>
      encodeTemplate({
        templateVersion: FACE_CALIBRATION.templateVersion,
        records: [{ modality: 'face', embedding: e }],
      });
    vs.forEach((v, i) => gal.add(`p${i}`, tpl(v)));
    const probe = tpl(vs[123].map((x, k) => x + ((k % 7) - 3) / 100));
    expect(await gal.identifyAsync(probe, { topK: 5 })).toEqual(gal.identify(probe, { topK: 5 }));
    expect((await gal.identifyAsync(probe, { topK: 1 }))[0].subject).toBe('p123');
  });

  it('adds, replaces and removes while searches run on the threads: each search answers for the gallery at its start', async () => {
    // large enough that each scan is still running on the threads when the changes below are made
    const { g, rows, r } = filled(60_000, 2, { threads: pool });
    const target = near(rows[59_999], r);
    const inFlight: { expected: unknown; got: Promise<unknown> }[] = [];
    const launch = (probe: Int8Array, topK = 5) => {
      // what one scan of the gallery as it is now answers; the threaded search starts at the same moment
      inFlight.push({ expected: g.identify(probe, { topK }), got: g.identifyAsync(probe, { topK }) });
    };
    launch(target);
    const owner = g.identify(target, { topK: 1 })[0].subject;
    g.remove(owner); // the best match leaves while the search that will name it runs
    launch(target);
    g.add('newcomer', target); // a perfect match arrives
    launch(target);
    g.replace('s5', [target, near(target, r)]); // a subject's templates change
    launch(target);
    // enough rows that the shared memory grows under the searches in flight
    for (let i = 0; i < 30_000; i++) g.add(`late${i}`, randomRow(r));
    launch(target, 10);
    g.remove('newcomer');
    g.remove('s5');
    launch(target, 10);
    const results = await Promise.all(inFlight.map((x) => x.got));
    results.forEach((got, i) => expect(got, `search ${i}`).toEqual(inFlight[i].expected));
    // the first search still named the removed subject, the ones after the change did not, and so on
    expect((results[0] as { subject: string }[])[0].subject).toBe(owner);
    expect((results[1] as { subject: string }[]).map((h) => h.subject)).not.toContain(owner);
    const first = (results[2] as { subject: string; cosine: number }[])[0];
    expect(first.subject).toBe('newcomer');
    expect(first.cosine).toBeCloseTo(1, 9);
    expect(
      (results[3] as { subject: string }[])
        .slice(0, 2)
        .map((h) => h.subject)
        .sort(),
    ).toEqual(['newcomer', 's5']);
    expect((results[5] as { subject: string }[]).map((h) => h.subject)).not.toContain('newcomer');
    // once nothing is in flight the removed rows are given back and every answer still agrees
    expect(g.size).toBe(60_000 - 3 /* owner's templates */ - 3 /* s5's original */ + 30_000);
    for (const probe of [target, near(rows[100], r)])
      expect(await g.identifyAsync(probe, { topK: 7 })).toEqual(g.identify(probe, { topK: 7 }));
  });

  it('many searches and changes interleaved at random', async () => {
    const { g, rows, r } = filled(20_000, 3, { threads: pool });
    const checks: Promise<void>[] = [];
    for (let step = 0; step < 60; step++) {
      const probe = near(rows[r() % rows.length], r);
      const expected = g.identify(probe, { topK: 4 });
      checks.push(g.identifyAsync(probe, { topK: 4 }).then((got) => expect(got).toEqual(expected)));
      const subject = `s${r() % 7000}`;
      const op = r() % 3;
      if (op === 0) g.remove(subject);
      else if (op === 1) g.replace(subject, [near(rows[r() % rows.length], r)]);
      else g.add(subject, randomRow(r));
      if (step % 10 === 9) await Promise.all(checks);
    }
    await Promise.all(checks);
    const probe = near(rows[5], r);
    expect(await g.identifyAsync(probe, { topK: 10 })).toEqual(g.identify(probe, { topK: 10 }));
  });
});
