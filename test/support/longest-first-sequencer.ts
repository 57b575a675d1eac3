import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds the longest suites take in `npm test` on the 2-core machine (two files at a time), measured; the
 * other files take less than about 20 s. A suite that gets much longer belongs here, else it may start last
 * and run alone at the end while the other worker idles.
 */
const MEASURED_SECONDS: Readonly<Record<string, number>> = {
  // The six longest from the last clean-clone run (158 files, 981.7 s of vitest); subject-read-model
  // was missing here, so a clean clone (no vitest cache) ordered it by size and could start it last.
  'test/browser/gateway-capture.test.ts': 111,
  'test/security/subject-read-model.test.ts': 94,
  'test/security/bad-input.test.ts': 81,
  'test/runtime/identity-races.test.ts': 66,
  'test/http/reextract.test.ts': 66,
  'test/http/licensing.test.ts': 75,
  'test/browser/dashboard.test.ts': 55,
  'test/runtime/crash-safety.test.ts': 50,
  'test/runtime/workers.test.ts': 48,
  'test/http/voice-data.test.ts': 45,
  'test/security/token-family.test.ts': 45,
  'test/http/dashboard-proxy.test.ts': 45,
  'test/runtime/package.test.ts': 44,
  // 43 before both starts ran at once on migrated data directories (0.65-0.70 of it alone, alternated).
  'test/runtime/startup-summary.test.ts': 29,
  'test/http/contract.test.ts': 40,
};

/**
 * Longest suite first, one project after another. With two workers taking files in this order, the run ends
 * when the sum of the work is done (about), not when the last long suite that started late is. A project's
 * files stay together because the suite runs without isolation (vitest.config.ts): a worker keeps its module
 * graph and warm code only from one file to the next of the same project, and starts afresh when the project
 * changes (a third of the files did when the order mixed projects). So the projects go in the order of their
 * longest suite (the browser's capture suite first), each longest first, and the last project holds only short
 * files (unit), which the two workers share out at the end. Expected lengths: the table above, else this
 * checkout's timings of the last run that ran the file (vitest's cache), else none (the larger file first, as
 * vitest does).
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expected = new Map<TestSpecification, [number, number]>();
    const longestOfProject = new Map<string, number>();
    for (const spec of files) {
      const path = relative(root, spec.moduleId);
      const key = `${spec.project.name}:${path}`;
      const seconds = MEASURED_SECONDS[path] ?? (this.ctx.cache.getFileTestResults(key)?.duration ?? 0) / 1000;
      expected.set(spec, [seconds, this.ctx.cache.getFileStats(key)?.size ?? 0]);
      longestOfProject.set(spec.project.name, Math.max(longestOfProject.get(spec.project.name) ?? 0, seconds));
    }
    return [...files].sort((a, b) => {
      const projectA = a.project.name;
      const projectB = b.project.name;
      if (projectA !== projectB)
        return longestOfProject.get(projectB)! - longestOfProject.get(projectA)! || projectA.localeCompare(projectB);
      const [secondsA, sizeA] = expected.get(a)!;
      const [secondsB, sizeB] = expected.get(b)!;
      return secondsB - secondsA || sizeB - sizeA;
    });
  }
}
