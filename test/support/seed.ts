import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** One operation as the seed document states it, with the full paths it must answer on. */
export interface SeedOperation {
  id: string;
  method: string;
  section: string;
  /** Full path per surface the operation is on (prefix included), e.g. { admin: '/admin/accounts' }. */
  paths: Partial<Record<'admin' | 'root' | 'user', string>>;
  /** For login and the token endpoint: the one unprefixed path, on no surface. */
  unprefixed?: string;
}

/** Locate the seed document: ../shared/seed/*.txt beside the repository. */
export function seedText(): string {
  const dir = join(import.meta.dirname, '..', '..', '..', 'shared', 'seed');
  const file = readdirSync(dir).find((f) => f.endsWith('.txt'));
  if (!file) throw new Error(`no seed document in ${dir}`);
  return readFileSync(join(dir, file), 'utf8');
}

/**
 * Parse section 4 of the seed: every operation table, the surface columns (or the heading's "admin only" /
 * "admin and root"), the /adjudicator root prefix of the adjudication group, the unprefixed login and token
 * endpoints, and the dashboard proxy's five methods described in prose.
 */
export function parseSeedOperations(text = seedText()): SeedOperation[] {
  const section4 = text.slice(text.indexOf('## 4. Endpoints'), text.indexOf('## 5.'));
  const parts = section4.split(/^### /m).slice(1);
  const out: SeedOperation[] = [];
  for (const part of parts) {
    const heading = part.split('\n')[0]!;
    const section = heading.split(' ')[0]!;
    const rootPrefix = /^Adjudication/.test(heading.slice(section.length + 1)) ? '/adjudicator' : '';
    const rows = part.split('\n').filter((l) => l.startsWith('|'));
    if (section === '4.6') {
      const shape = /\/dashboard\/\*\*/.test(part);
      if (!shape) throw new Error('dashboard proxy shape not found');
      for (const m of part.matchAll(/(proxyDashboard\d?) \((GET|POST|PUT|DELETE|PATCH)\)/g)) {
        out.push({ id: m[1]!, method: m[2]!, section, paths: { admin: '/admin/dashboard/**', root: '/dashboard/**' } });
      }
      continue;
    }
    if (rows.length < 3) continue;
    const header = rows[0]!.split('|').map((c) => c.trim());
    const col = (name: string) => header.indexOf(name);
    for (const row of rows.slice(2)) {
      const cells = row.split('|').map((c) => c.trim());
      const id = cells[col('Operation')]!;
      const method = cells[col('Method')]!;
      const rawPath = cells[col('Path')]!;
      const path = rawPath.replace(/\s*\(.*\)$/, '');
      const note = rawPath.match(/\((.*)\)$/)?.[1] ?? '';
      const op: SeedOperation = { id, method, section, paths: {} };
      if (/no prefix on any surface/.test(note)) {
        op.unprefixed = path;
      } else if (/root surface only/.test(note)) {
        op.paths.root = path;
      } else {
        let on: ('admin' | 'root' | 'user')[];
        if (col('A') >= 0) {
          on = [];
          if (cells[col('A')] === 'x') on.push('admin');
          if (cells[col('R')] === 'x') on.push('root');
          if (col('U') >= 0 && cells[col('U')] === 'x') on.push('user');
        } else if (/admin only/.test(heading)) {
          on = ['admin'];
        } else if (/admin and root/.test(heading)) {
          on = ['admin', 'root'];
        } else {
          throw new Error(`cannot tell the surfaces of ${id}`);
        }
        for (const s of on) op.paths[s] = `${s === 'admin' ? '/admin' : s === 'user' ? '/user' : rootPrefix}${path}`;
      }
      out.push(op);
    }
  }
  return out;
}

/** A concrete URL path for a templated one: parameters get harmless sample values. */
export function concretePath(path: string): string {
  return path
    .replace(/\*\*$/, 'some/page')
    .replace(/\{uuid\}/g, '00000000-0000-4000-8000-000000000000')
    .replace(/\{id\}/g, '1')
    .replace(/\{(\w+)\}/g, 'sample-subject');
}
