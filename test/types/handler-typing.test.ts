import { join } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';

/**
 * `npm test` runs no typecheck, so this runs the compiler over handler-typing.ts: each `@ts-expect-error`
 * there marks a wrong field name, and the compile fails if any of them stops being an error (the inference
 * of handler input from the operation's schemas decayed to `any`).
 * Only that file's diagnostics are asked for (with the program's options and global ones): the checker then
 * resolves just the types it uses from src, where `tsc -p` checked every file it imports, which is
 * `npm run typecheck`'s job (about 9 CPU-s against 16-18 for tsc -p at load 18-20).
 */
it('a handler that names a field its schemas do not have fails to compile', () => {
  const configPath = join(import.meta.dirname, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  expect(config?.errors).toEqual([]);
  expect(config!.fileNames.map((f) => f.replace(/^.*\//, ''))).toEqual(['handler-typing.ts']);
  const program = ts.createProgram({ rootNames: config!.fileNames, options: config!.options });
  const file = program.getSourceFile(config!.fileNames[0]!)!;
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(file),
    ...program.getSemanticDiagnostics(file),
  ];
  const described = diagnostics.map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const at = where ? `handler-typing.ts:${where.line + 1}:${where.character + 1} ` : '';
    return `${at}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  expect(described).toEqual([]);
}, 300_000);
