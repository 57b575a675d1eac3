import { serve } from '@hono/node-server';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ADMIN_PASSWORD, bootForTest } from '../support/databases.js';
import { launchChromium } from '../support/browser.js';

/**
 * The docs page's "Authorize" button runs the authorization code flow with PKCE through the built-in
 * `bims-docs` client: Swagger UI opens our sign-in page in a popup, receives the code on its
 * oauth2-redirect.html and exchanges it at the token endpoint.
 */
let booted: Awaited<ReturnType<typeof bootForTest>>;
let stop: () => Promise<void>;
let base: string;
let browser: Browser;

/** A free loopback port, so the service can be configured with the base URL it will really have. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  booted = await bootForTest('pglite', { BIMS_BASE_URL: base });
  const server = serve({ fetch: booted.app.fetch, port, hostname: '127.0.0.1' });
  stop = () => new Promise<void>((done) => server.close(() => done()));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stop?.();
  await booted?.close();
});

describe('signing in from the docs page', () => {
  it('authorizes Swagger UI with the ADMIN scope through the popup', async () => {
    const page = await browser.newPage();
    const tokenStatuses: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/oauth2/token')) tokenStatuses.push(response.status());
    });
    await page.goto(`${base}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    await page.click('button.authorize');
    await page.waitForSelector('.modal-ux');
    await page.click('label[for="ADMIN-authorizationCode-checkbox-admin-oauth"]');
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      page.click('button[aria-label="Apply given OAuth2 credentials"] >> nth=0'),
    ]);
    await popup.waitForSelector('#username');
    expect(popup.url()).toContain('client_id=bims-docs');
    expect(popup.url()).toContain('code_challenge_method=S256');
    await popup.fill('#username', 'admin');
    await popup.fill('#password', ADMIN_PASSWORD);
    await popup.click('button[value=login]');
    // Swagger UI's redirect page hands the code to the opener and closes itself; the opener then exchanges it.
    await page.waitForSelector('button[aria-label="Remove authorization"]', { timeout: 30_000 });
    expect(tokenStatuses).toEqual([200]);
    await page.close();
  });
});
