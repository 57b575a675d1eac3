import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootForTest, serviceDialects } from '../support/databases.js';
import { componentProblems, externalOperations, NO_SIDECAR_ENV } from '../support/external-ops.js';
import { makeCredentials, type Credential } from '../support/matrix-credentials.js';
import { allRoutes, holds, type Route } from '../support/routes.js';
import { concretePath } from '../support/seed.js';
import { operatorLeaks } from '../support/fuzz/oracle.js';

/**
 * The auth matrix: every operation of the table, on every surface it is mounted on, called with every kind
 * of credential. Bad or missing credentials must be a 401 that says how to authenticate; good credentials
 * without the surface's role a 403; good credentials with it must get past authorisation (any answer but
 * 401/403, and no 5xx except the documented component-unavailable answers of the external operations).
 * The request carries no body or query: "allowed" then usually means a 400 naming the missing fields,
 * which is as far as authorisation needs to be proven. Operations the table declares `open` take any
 * credential, good or bad, and must let every one through.
 */

const routes = allRoutes();

for (const dialect of serviceDialects) {
  describe(`auth matrix on ${dialect}`, () => {
    let booted: Awaited<ReturnType<typeof bootForTest>>;
    let credentials: Credential[];
    let skew = 0;

    beforeAll(async () => {
      booted = await bootForTest(dialect, NO_SIDECAR_ENV, {
        now: () => new Date(Date.now() + skew),
        clientAddress: (request) => request.headers.get('x-test-address') ?? 'unknown',
      });
      credentials = await makeCredentials(booted, (ms) => {
        skew = ms;
      });
    });
    afterAll(async () => {
      await booted?.close();
    });

    async function call(route: Route, credential: Credential): Promise<Response> {
      // Refused credentials come from a stranger's address, good ones from the office's. Failed logins are
      // throttled per (account, address) and per address; the matrix is about which answer each credential
      // gets, not about the throttle (test/security/login-throttle.test.ts), so the stranger's failures are
      // forgotten after each refused credential. The office's are never cleared: thousands of failures for
      // `admin` from the stranger must not refuse admin's own password from the office.
      const address = credential.role ? 'office' : 'stranger';
      const headers: Record<string, string> = {
        'x-test-address': address,
        ...(credential.header === null ? {} : { authorization: credential.header }),
      };
      const res = await booted.app.fetch(
        new Request(`http://127.0.0.1:8080${concretePath(route.path)}`, {
          method: route.spec.method.toUpperCase(),
          headers,
        }),
      );
      if (!credential.role) await booted.services.auth.throttle.forget(address);
      return res;
    }

    /** What is wrong with the answer, or null when it is the expected one. */
    async function judge(route: Route, credential: Credential, res: Response): Promise<string | null> {
      const body = await res.text();
      if (res.headers.get('x-bims-operation') !== route.spec.id)
        return `answered by ${res.headers.get('x-bims-operation')} (${res.status})`;
      // An operation the table declares open reads no credentials: whatever is sent, it is let through.
      if (!credential.role && !route.open) {
        if (res.status !== 401) return `${res.status}, expected 401`;
        const challenge = res.headers.get('www-authenticate') ?? '';
        if (!/^Basic realm=/.test(challenge) || !/Bearer realm=/.test(challenge))
          return `401 without a Basic and Bearer challenge: '${challenge}'`;
        if (!/\/unauthorized"/.test(body)) return `401 body is not the unauthorized problem: ${body.slice(0, 200)}`;
        return null;
      }
      if (credential.role && !route.open && !holds(credential.role, route.role)) {
        if (res.status !== 403) return `${res.status}, expected 403`;
        if (!/\/forbidden"/.test(body)) return `403 body is not the forbidden problem: ${body.slice(0, 200)}`;
        return null;
      }
      if (res.status === 401 || res.status === 403)
        return `${res.status} for ${credential.name}: ${body.slice(0, 200)}`;
      // Problems are for API callers: no server paths, commands or configuration to set (the log has those).
      if (res.status >= 400 && operatorLeaks(body).length)
        return `a problem carrying ${operatorLeaks(body).join('; ')}`;
      // The user surface shows no host details (docs/user-surface.md).
      if (route.surface === 'user' && res.status === 200 && /"(hostname|runtime|serverVersion|accounts)"/.test(body))
        return `host details on /user: ${body.slice(0, 200)}`;
      if (res.status >= 500) {
        const type = componentProblems[res.status];
        const documented = externalOperations.has(route.spec.id) && type !== undefined && body.includes(`/${type}"`);
        if (!documented) return `${res.status}: ${body.slice(0, 300)}`;
      }
      return null;
    }

    const byOperation = new Map<string, Route[]>();
    for (const route of routes) byOperation.set(route.spec.id, [...(byOperation.get(route.spec.id) ?? []), route]);

    for (const [id, opRoutes] of byOperation) {
      it(`${id} on ${opRoutes.map((r) => r.surface).join(', ')}`, async () => {
        const wrong: string[] = [];
        for (const route of opRoutes) {
          for (const credential of credentials) {
            const verdict = await judge(route, credential, await call(route, credential));
            if (verdict)
              wrong.push(`${route.spec.method.toUpperCase()} ${route.path} [${credential.name}]: ${verdict}`);
          }
        }
        expect(wrong).toEqual([]);
      });
    }

    it('covers every route with every credential, and each kind of answer occurs', () => {
      expect(routes.length).toBeGreaterThan(180);
      expect(credentials.filter((c) => !c.role).length).toBeGreaterThanOrEqual(10);
      // Each role is refused somewhere and let through somewhere, so neither branch is vacuous.
      for (const role of ['USER', 'ADJUDICATOR'] as const) {
        expect(routes.some((r) => !holds(role, r.role))).toBe(true);
        expect(routes.some((r) => holds(role, r.role))).toBe(true);
      }
    });
  });
}
