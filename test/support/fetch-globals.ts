/**
 * `Request` and `Response` as Node defines them on `globalThis`, and the way back to them.
 *
 * @hono/node-server replaces both globals, for the whole process, with its lightweight classes as soon as it
 * makes a request listener (`serve`, the dashboard and sidecar servers, `serveOnLoopback`): that is how it
 * answers cheaply in the runtime, where each process serves one app. A test file that starts a server in
 * process leaves them replaced, and with `isolate: false` the next files of the same worker build their
 * requests and answers with them too. A lightweight answer built from a plain header record loses any header
 * set through `res.headers` afterwards once its body is read (it is rebuilt from its constructor arguments),
 * so `app.fetch` answers read in process lose `X-Bims-Operation`, `Allow` and the rest of what
 * security-headers.ts sets afterwards: the suites that check those failed only after a server suite.
 */

const NAMES = ['Request', 'Response'] as const;
type Saved = Record<(typeof NAMES)[number], PropertyDescriptor>;

/** Where the worker's first look at the globals is kept: setup files run again for each test file. */
const KEPT = Symbol.for('bims.test.nativeFetchGlobals');

/** The globals' descriptors as the worker first saw them, before any test file ran (so Node's own). */
export function nativeFetchGlobals(): Saved {
  const holder = globalThis as { [KEPT]?: Saved };
  holder[KEPT] ??= Object.fromEntries(
    NAMES.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)!]),
  ) as Saved;
  return holder[KEPT];
}

/** Puts Node's `Request` and `Response` back, whatever replaced them since. */
export function restoreFetchGlobals(saved: Saved = nativeFetchGlobals()): void {
  for (const name of NAMES) Object.defineProperty(globalThis, name, saved[name]);
}
