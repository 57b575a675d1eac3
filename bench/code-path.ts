// npm run bench -- code-path: the files of src/ whose code runs for one request (issue 34's "files on the enrol
// path and on the subject read path"). The service boots in this process on PGlite with the suites' recorded
// extractor (the models' own files run in the pool's threads and are not counted either way); each request is
// made once to warm, then again for the count (V8's precise coverage, on from before the boot), and a file
// counts when one of its functions ran during that request.
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { adminAuth, bootForTest } from '../test/support/databases.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../test/support/extractor.js';
import { photo } from '../test/biometrics/helpers.js';

const root = fileURLToPath(new URL('..', import.meta.url));

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { count: number }[] }[];
}

/** The src/ files with at least one function that ran while `act` did. */
async function filesRunBy(session: Session, act: () => Promise<void>): Promise<string[]> {
  // Taking the coverage resets the counters: what the next take reports ran in between.
  await session.post('Profiler.takePreciseCoverage');
  await act();
  const { result } = (await session.post('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const file = relative(root, fileURLToPath(script.url));
    if (!file.startsWith('src/')) continue;
    // After the reset a module's own range counts only what ran since: V8 folds a nested function into the range
    // around it when their counts agree, so the module's range may stand for a handler it holds.
    if (script.functions.some((f) => f.ranges.some((r) => r.count > 0))) files.add(file);
  }
  return [...files].sort();
}

export async function run(args: string[]) {
  const list = args.includes('--list');
  // Counting from before the boot: a function V8 compiled before coverage started may go uncounted.
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const booted = await bootForTest('pglite', {}, { createExtractor: sharedExtractorFactory() });
  const image = photo('labelled/franck/franck_01829.jpg');
  const enrol = async (subjectId: string) => {
    const form = new FormData();
    form.set('subjectId', subjectId);
    form.set('image', new Blob([new Uint8Array(image)], { type: 'image/jpeg' }), 'face.jpg');
    const res = await booted.app.request('/admin/subjects/create', {
      method: 'POST',
      headers: { authorization: adminAuth },
      body: form,
    });
    if (res.status !== 201) throw new Error(`enrolment answered ${res.status}: ${await res.text()}`);
  };
  const read = async (subjectId: string) => {
    const res = await booted.app.request(`/admin/subjects/${subjectId}`, { headers: { authorization: adminAuth } });
    if (res.status !== 200) throw new Error(`read answered ${res.status}: ${await res.text()}`);
    await res.text();
  };
  try {
    await enrol('path-warm');
    await read('path-warm');
    // Another subject each time: the first enrolment was a duplicate candidate's first sight, not this one's.
    const enrolFiles = await filesRunBy(session, () => enrol('path-measured'));
    const readFiles = await filesRunBy(session, () => read('path-measured'));
    return {
      enrol: { request: 'POST /admin/subjects/create (multipart, one face)', files: enrolFiles.length },
      read: { request: 'GET /admin/subjects/{subjectId}', files: readFiles.length },
      ...(list ? { enrolFiles, readFiles } : {}),
    };
  } finally {
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
    await booted.close();
    await closeSharedExtractor();
  }
}
