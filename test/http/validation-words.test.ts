import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest } from '../support/databases.js';
import { send } from '../support/http.js';
import { VALIDATOR_WORDING } from '../support/fuzz/oracle.js';

/**
 * Validation messages are the interface's words, not the validator's (issue 32, point 8): an outside tester
 * met "expected nonoptional, received undefined". Bad bodies and queries of every kind, to operations of
 * several areas; every field error must read as ours.
 */
describe('validation messages', () => {
  let booted: Awaited<ReturnType<typeof bootForTest>>;
  beforeAll(async () => {
    booted = await bootForTest('pglite');
  });
  afterAll(async () => {
    await booted?.close();
  });

  it('name what is wrong in plain words', async () => {
    const cases: [string, string, unknown, Record<string, string>][] = [
      ['POST', '/admin/accounts/create', {}, { 'body.username': 'is required', 'body.role': 'is required' }],
      [
        'POST',
        '/admin/accounts/create',
        { username: 7, password: 'x', role: 'KING' },
        {
          'body.username': 'must be a string',
          'body.role': 'must be one of: ADMIN, ADJUDICATOR, USER',
        },
      ],
      [
        'POST',
        '/admin/operations/create',
        { type: 'VERIFI', faces: [] },
        {
          'body.type': 'must be one of: VERIFY, IDENTIFY, CHECK',
          'body.faces': 'must have at least 1 item',
        },
      ],
      [
        'POST',
        '/admin/management/settings',
        { key: 'adjudication.requiredDecisions', value: 0 },
        {
          'body.value': 'must be at least 1',
        },
      ],
      [
        'POST',
        '/admin/management/settings',
        { key: 'adjudication.requiredDecisions' },
        { 'body.value': 'is required' },
      ],
      ['DELETE', '/admin/operations', { uuids: ['not-a-uuid'] }, { 'body.uuids.0': 'must be a UUID' }],
      [
        'POST',
        '/admin/subjects/create',
        { subjectId: 'x', options: { deduplicate: 'yes' }, template: 'QUJD' },
        {
          'body.options.deduplicate': 'must be true or false',
        },
      ],
      [
        'GET',
        '/admin/operations?size=5000&page=-1',
        undefined,
        {
          'query.size': 'must be at most 1000',
          'query.page': 'must be at least 0',
        },
      ],
    ];
    for (const [method, path, body, expected] of cases) {
      const res = await send(booted.app, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(400);
      const problem = (await res.json()) as { detail: string; errors: { field: string; message: string }[] };
      const got = Object.fromEntries(problem.errors.map((e) => [e.field, e.message]));
      expect(got, `${method} ${path}`).toMatchObject(expected);
      for (const e of problem.errors) expect(e.message, `${method} ${path} ${e.field}`).not.toMatch(VALIDATOR_WORDING);
      expect(problem.detail).not.toMatch(VALIDATOR_WORDING);
    }
  });
});
