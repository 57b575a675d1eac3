import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ADMIN_PASSWORD, bootForTest } from '../support/databases.js';
import { launchChromium } from '../support/browser.js';
import { authorizeUrl, pkcePair, postForm } from '../support/oauth-flow.js';
import { serveOnLoopback } from '../support/serve.js';

/**
 * The sign-in page in a real browser: its strict CSP must still let the form post, and let the browser
 * follow the redirect to the client's origin (browsers apply `form-action` to that redirect too).
 */
let booted: Awaited<ReturnType<typeof bootForTest>>;
let server: Awaited<ReturnType<typeof serveOnLoopback>>;
let callback: Awaited<ReturnType<typeof serveOnLoopback>>;
let browser: Browser;
const received: URL[] = [];

beforeAll(async () => {
  booted = await bootForTest('pglite', {});
  server = await serveOnLoopback(booted.app.fetch);
  // Plays the native app's loopback listener (RFC 8252), on a port of its own: another origin.
  callback = await serveOnLoopback((request) => {
    received.push(new URL(request.url));
    return new Response('<!doctype html><title>done</title><p>You may close this window.</p>', {
      headers: { 'content-type': 'text/html' },
    });
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await callback?.stop();
  await server?.stop();
  await booted?.close();
});

describe('the OAuth sign-in page in a real browser', () => {
  it('signs in, redirects to a loopback client and the code is redeemable', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const { challenge, verifier } = await pkcePair();
    const redirectUri = `${callback.url}/callback`;
    await page.goto(`${server.url}${authorizeUrl({ challenge, clientId: 'bims-cli', redirectUri, state: 'xyz' })}`);
    // The style arrived (nonce accepted): the button has the colour the inline style gives it.
    expect(await page.$eval('button[value=login]', (b) => getComputedStyle(b).backgroundColor)).toBe(
      'rgb(36, 86, 201)',
    );

    await page.fill('#username', 'admin');
    await page.fill('#password', 'wrong-password');
    await page.click('button[value=login]');
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toContain('Wrong user name or password');

    await page.fill('#password', ADMIN_PASSWORD);
    await page.press('#password', 'Enter');
    await page.waitForURL(`${callback.url}/**`);
    expect(violations).toEqual([]);
    const landed = received.find((u) => u.pathname === '/callback')!;
    expect(landed.searchParams.get('state')).toBe('xyz');
    const res = await postForm({ request: (p, i) => booted.app.request(p, i) }, '/oauth2/token', {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code')!,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: 'bims-cli',
    });
    expect(res.status).toBe(200);
    expect((await res.json()).scope).toBe('ADMIN');
    await page.close();
  });
});
