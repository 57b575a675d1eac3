import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { connectDatabase } from './connect.js';

/**
 * connect.ts trims PGlite's table of result parsers (copied for every query) to our overrides and the types
 * whose parser does something; every other type falls back to PGlite's built-in parser. Results must be
 * exactly what an untouched PGlite answers, arrays included, apart from our own overrides (int8 as a number,
 * bytea through our hex parser, which agree with PGlite's on these values).
 */
describe('PGlite result parsing with the trimmed parser table', () => {
  it('answers every type as an untouched PGlite does', async () => {
    const query = `select 1::int2 a, 2::int4 b, 3::int8 c, 4::oid d, 1.5::float4 e, 2.25::float8 f, 12.5::numeric g, true h,
      'abc'::text i, 'x'::varchar j, 'y'::char(2) k, '{"x":[1,null]}'::jsonb l, '{"y":2}'::json m,
      '2026-11-26 12:00:00.123456+02'::timestamptz n, '2026-11-26 12:00:00.5'::timestamp o, '2020-01-01'::date p,
      '\\x00ff10'::bytea q, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid r, 'NaN'::float4 s, '-Infinity'::float8 t,
      array[1,2]::int2[] u, array[1,null]::int4[] v, array[3]::int8[] w, array['a','b,c']::text[] x, array[true,false] y,
      array[1.5]::float4[] z, array['{"a":1}']::jsonb[] aa, array['2026-01-01 00:00:00+00']::timestamptz[] ab,
      array['2020-01-02']::date[] ac, array['\\x01']::bytea[] ad, array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11']::uuid[] ae,
      '12:34'::time af, interval '1 day' ag, '1.2.3.4'::inet ah, null::int4 ai`;
    const raw = await PGlite.create();
    const trimmed = await connectDatabase({ dataDir: 'memory://' });
    try {
      const expected = (await raw.query<Record<string, unknown>>(query)).rows[0]!;
      const actual = (await sql.raw<Record<string, unknown>>(query).execute(trimmed.db)).rows[0]!;
      const normal = (v: unknown) =>
        JSON.stringify(v, (_, x) =>
          typeof x === 'bigint' ? Number(x) : x instanceof Uint8Array ? [...x] : Number.isNaN(x) ? 'NaN' : x,
        );
      for (const key of Object.keys(expected)) expect(normal(actual[key]), key).toBe(normal(expected[key]));
      expect(actual.n).toBeInstanceOf(Date);
      expect(actual.q).toBeInstanceOf(Uint8Array);
    } finally {
      await raw.close();
      await trimmed.close();
    }
  });
});
