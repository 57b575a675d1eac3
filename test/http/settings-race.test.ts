// Settings with a cross-key rule (low <= high) written at the same moment (issue 15, item 6): two writes that
// are each valid alone but not together must never both land. Real concurrency, many trials with a count of
// failures, on both dialects: through HTTP, and straight through the settings service (both calls start in
// the same tick, so each validates before the other writes); on PostgreSQL the two writes go to two service
// instances booted on one database (each with its own settings cache and connection pool), so serialising
// inside one process would not be enough.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boot, type Booted } from '../../src/runtime/bootstrap.js';
import { DomainError } from '../../src/services/errors.js';
import { createLogger } from '../../src/logger.js';
import { nodeAssetReader } from '../../src/runtime/node-assets.js';
import { adminAuth, bootForTest, dialects } from '../support/databases.js';

const LOW = 'deduplication.adjudicationThreshold',
  HIGH = 'deduplication.duplicateThreshold';
const TRIALS = 30;

// PostgreSQL too (dialects, not serviceDialects): a race between transactions, which interleave only on a pool of
// connections; PGlite's one connection runs them in turn.
for (const dialect of dialects) {
  describe(`ordered settings written concurrently on ${dialect}`, () => {
    let a: Awaited<ReturnType<typeof bootForTest>>;
    /** The second node: another service on the same PostgreSQL database; PGlite is one process, so the same one. */
    let b: Pick<Booted, 'app' | 'services'>;
    let second: Booted | undefined;

    beforeAll(async () => {
      a = await bootForTest(dialect);
      if (dialect === 'postgres') {
        second = await boot({
          config: a.config,
          runtime: 'test',
          hostname: 'second-node',
          logger: createLogger('silent'),
          readAsset: nodeAssetReader(),
        });
        b = second;
      } else {
        b = a;
      }
    });
    afterAll(async () => {
      await second?.close();
      await a?.close();
    });

    const call = (node: Pick<Booted, 'app'>, method: string, path: string, body?: unknown) =>
      node.app.request(path, {
        method,
        headers: { authorization: adminAuth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const set = (node: Pick<Booted, 'app'>, key: string, value: number | null) =>
      call(node, 'POST', '/admin/management/settings', { key, value });
    /** The stored overrides of the pair, straight from the database (no cache), with their effective values. */
    async function stored() {
      const rows = await a.services.ctx.db
        .selectFrom('settings')
        .select(['key', 'value'])
        .where('key', 'in', [LOW, HIGH])
        .execute();
      const value = (key: string, dflt: number) =>
        (rows.find((r) => r.key === key)?.value as number | undefined) ?? dflt;
      return { low: value(LOW, 48), high: value(HIGH, 72) };
    }
    /** A settings write through the service, as its HTTP status: 200, or 400 for a refused value. */
    const status = (write: Promise<unknown>) =>
      write.then(
        () => 200,
        (e) => {
          if (e instanceof DomainError && e.code === 'validation') return 400;
          throw e;
        },
      );
    /**
     * Start each trial from adjudication 48, duplicate 200: raising the one or lowering the other is valid
     * alone. Written through both nodes, so each node's next read goes to the database.
     */
    async function start() {
      expect((await set(b, HIGH, 200)).status).toBe(200);
      expect((await set(a, LOW, 48)).status).toBe(200);
    }
    async function trials(name: string, race: () => Promise<(Response | number)[]>) {
      let broken = 0,
        bothAccepted = 0;
      for (let i = 0; i < TRIALS; i++) {
        await start();
        const answers = await Promise.all(
          (await race()).map(async (r) =>
            typeof r === 'number' ? r : (expect([200, 400], await r.clone().text()).toContain(r.status), r.status),
          ),
        );
        for (const code of answers) expect([200, 400]).toContain(code);
        if (answers.every((code) => code === 200)) bothAccepted++;
        const { low, high } = await stored();
        if (low > high) broken++;
      }
      console.log(
        `${dialect} ${name}: ${broken} of ${TRIALS} trials left ${LOW} above ${HIGH} (${bothAccepted} accepted both writes)`,
      );
      expect(broken, `${name}: trials ending out of order`).toBe(0);
    }

    it(`two setSetting requests, ${LOW} 150 and ${HIGH} 100, never both land`, async () => {
      await trials('HTTP set/set', () => Promise.all([set(a, LOW, 150), set(b, HIGH, 100)]));
      await trials('service set/set', () =>
        Promise.all([status(a.services.settings.set(LOW, 150)), status(b.services.settings.set(HIGH, 100))]),
      );
    });

    it(`deleting the ${HIGH} override (back to 72) while ${LOW} is raised to 150 never leaves them out of order`, async () => {
      await trials('HTTP delete/set', () =>
        Promise.all([call(b, 'DELETE', `/admin/management/setting?key=${HIGH}`), set(a, LOW, 150)]),
      );
      await trials('service delete/set', () =>
        Promise.all([status(b.services.settings.delete(HIGH)), status(a.services.settings.set(LOW, 150))]),
      );
      await trials('service set null/set', () =>
        Promise.all([status(b.services.settings.set(HIGH, null)), status(a.services.settings.set(LOW, 150))]),
      );
    });

    it('resetSettings while a setting is raised never leaves them out of order', async () => {
      // Reset first leaves both at their defaults (48 <= 72) and 150 must then be refused; in the other order
      // 150 <= 200 is accepted and the reset removes it.
      await trials('HTTP reset/set', () =>
        Promise.all([call(b, 'POST', '/admin/management/settings/reset'), set(a, LOW, 150)]),
      );
      await trials('service reset/set', () =>
        Promise.all([status(b.services.settings.reset()), status(a.services.settings.set(LOW, 150))]),
      );
    });
  });
}
