import { describe, expect, it } from 'vitest';
import { archiveName, operationFolder, safeSegment, subjectFolder } from './file-names.js';

describe('file names inside downloads', () => {
  it('safeSegment keeps letters, digits, - and _ and nothing that could climb out of a folder', () => {
    expect(safeSegment('citizen-000123_a')).toBe('citizen-000123_a');
    expect(safeSegment('../../etc/passwd')).toBe('etc_passwd');
    expect(safeSegment('..')).toBe('_');
    expect(safeSegment('.hidden')).toBe('hidden');
    expect(safeSegment('C:\\Windows\\system32')).toBe('C_Windows_system32');
    expect(safeSegment('名前')).toBe('_');
    expect(safeSegment('a*?<>|"b')).toBe('a_b');
    expect(safeSegment('x'.repeat(128))).toHaveLength(64);
  });

  it('subjectFolder keeps safe subjectIds and gives cleaned ones a suffix, so two subjects never share a folder', () => {
    expect(subjectFolder('alice', 7)).toBe('subjects/alice');
    expect(subjectFolder('a/b', 9)).toBe('subjects/a_b~9');
    expect(subjectFolder('a_b', 10)).toBe('subjects/a_b');
    expect(subjectFolder('a:b', 11)).toBe('subjects/a_b~11');
    expect(subjectFolder('..', 12)).toBe('subjects/_~12');
    expect(subjectFolder('x'.repeat(100), 13)).toBe(`subjects/${'x'.repeat(64)}~13`);
    const folders = ['a/b', 'a_b', 'a:b', 'a b', '_a_b_'].map((s, i) => subjectFolder(s, i + 1));
    expect(new Set(folders).size).toBe(folders.length);
    for (const f of folders) expect(f).toMatch(/^subjects\/[A-Za-z0-9_~-]+$/);
  });

  it('operationFolder and archiveName use safe characters only', () => {
    expect(operationFolder('0f8fad5b-d9cb-469f-a165-70867728950e')).toBe(
      'operations/0f8fad5b-d9cb-469f-a165-70867728950e',
    );
    expect(archiveName('images', ['subject', 'a/../b"'], new Date('2026-11-25T23:45:00.123Z'))).toBe(
      'bims-images-subject-a_b-20261125T234500Z.zip',
    );
  });
});
