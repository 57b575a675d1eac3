import { afterAll, describe, expect, it } from 'vitest';
import { nativeFetchGlobals, restoreFetchGlobals } from '../support/fetch-globals.js';
import { serveOnLoopback } from '../support/serve.js';

/** An answer as security-headers.ts makes one: built from a header record, a header set afterwards, then read. */
async function headerAfterBodyRead(): Promise<string | null> {
  const res = new Response('{}', { status: 401, headers: { 'content-type': 'application/json' } });
  res.headers.set('X-Bims-Operation', 'getInfo');
  await res.text();
  return res.headers.get('x-bims-operation');
}

describe('fetch globals after a server started in process (test/support/fetch-globals.ts)', () => {
  const native = nativeFetchGlobals();
  afterAll(() => restoreFetchGlobals(native));

  it('a server replaces Request and Response, and restoreFetchGlobals puts Node’s back', async () => {
    const { Request: NodeRequest, Response: NodeResponse } = globalThis;
    expect(await headerAfterBodyRead()).toBe('getInfo');

    const server = await serveOnLoopback(() => new Response('ok'));
    await server.stop();
    // What the next test file of the worker saw before the setup file put them back: the header is gone.
    expect(globalThis.Response).not.toBe(NodeResponse);
    expect(globalThis.Request).not.toBe(NodeRequest);
    expect(await headerAfterBodyRead()).toBeNull();

    restoreFetchGlobals(native);
    expect(globalThis.Response).toBe(NodeResponse);
    expect(globalThis.Request).toBe(NodeRequest);
    expect(await headerAfterBodyRead()).toBe('getInfo');
  });
});
