import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAuth, bootForTest } from '../support/databases.js';

/**
 * A client generated from the published document by openapi-typescript types the bodies of createSubject and
 * createOperation, so it catches `type: "VERIFI"` (issue 32, point 8: their `anyOf` branches listed only
 * `required` and the generated bodies were `unknown`). The types of the admin document are generated, a file
 * using them with `@ts-expect-error` on each mistake is compiled alone: an expected error that does not occur
 * is itself an error.
 */
describe('a client generated from the document by openapi-typescript', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  let dir: string;
  beforeAll(async () => {
    booted = await bootForTest('pglite');
    dir = mkdtempSync(join(tmpdir(), 'bims-generated-client-'));
  });
  afterAll(async () => {
    await booted?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('types the request bodies, branches and forms included', async () => {
    const doc = await (
      await booted.app.request('/admin/openapi.json', { headers: { authorization: adminAuth } })
    ).json();
    writeFileSync(join(dir, 'schema.ts'), astToString(await openapiTS(doc)));
    writeFileSync(
      join(dir, 'use.ts'),
      `import type { components, paths } from './schema';
type Operation = components['schemas']['CreateOperationRequest'];
type Subject = components['schemas']['CreateSubjectRequest'];
type Form = NonNullable<paths['/admin/subjects/create']['post']['requestBody']>['content']['multipart/form-data'];
type Setting = components['schemas']['SetSettingRequest'];

export const verify: Operation = { type: 'VERIFY', subjectId: 'alice', faces: [{ image: 'QUJD' }] };
export const identify: Operation = { type: 'IDENTIFY', voices: [{ audio: 'QUJD' }] };
// @ts-expect-error a misspelt operation type
export const misspelt: Operation = { type: 'VERIFI', faces: [{ image: 'QUJD' }] };
// @ts-expect-error a field no branch has
export const unknownField: Operation = { type: 'IDENTIFY', faces: [{ image: 'QUJD' }], photo: 'x' };
export const enrol: Subject = { subjectId: 'alice', faces: [{ image: 'QUJD' }], metadata: { office: 'north' } };
// @ts-expect-error subjectId is required
export const anonymous: Subject = { faces: [{ image: 'QUJD' }] };
// @ts-expect-error faces are objects with an image
export const bareFaces: Subject = { subjectId: 'alice', faces: ['QUJD'] };
export const form: Form = { subjectId: 'alice', image: ['bytes'] };
// @ts-expect-error the form needs its subjectId too
export const formWithoutId: Form = { image: ['bytes'] };
export const reset: Setting = { key: 'matching.threshold', value: null };
// @ts-expect-error value is required (null restores the default)
export const noValue: Setting = { key: 'matching.threshold' };
`,
    );
    const program = ts.createProgram([join(dir, 'use.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? `line ${d.file.getLineAndCharacterOfPosition(d.start!).line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    expect(errors).toEqual([]);
  }, 120_000);
});
