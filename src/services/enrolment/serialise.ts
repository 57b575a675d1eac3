let tail: Promise<unknown> = Promise.resolve();

/**
 * Run enrolment critical sections one after another in this process: deduplication reads the gallery and
 * the insert changes it, so two enrolments of the same person arriving together must not interleave.
 * (Matching takes milliseconds, so the queue stays short; extraction happens before, in parallel.)
 */
export function serialised<T>(work: () => Promise<T>): Promise<T> {
  const run = tail.then(work, work);
  tail = run.catch(() => undefined);
  return run;
}
