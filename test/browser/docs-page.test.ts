import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { bootForTest } from '../support/databases.js';
import { launchChromium } from '../support/browser.js';
import { serveOnLoopback } from '../support/serve.js';

let booted: Awaited<ReturnType<typeof bootForTest>>;
let server: Awaited<ReturnType<typeof serveOnLoopback>>;
let browser: Browser;

beforeAll(async () => {
  booted = await bootForTest('pglite', {});
  server = await serveOnLoopback(booted.app.fetch);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await booted?.close();
});

describe('/docs in a real browser', () => {
  it('renders every surface offline and switches between them', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol.startsWith('http') && url.hostname !== '127.0.0.1') foreign.push(request.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${server.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    const adminText = await page.textContent('#swagger-ui');
    expect(adminText).toContain('createAccount');
    expect(adminText).toContain('/admin/accounts/create');

    await page.selectOption('.topbar select', { label: 'user (/user)' });
    await page.waitForFunction(
      () => document.querySelector('#swagger-ui')?.textContent?.includes('/user/subjects/id-list'),
      null,
      { timeout: 30_000 },
    );
    const userText = await page.textContent('#swagger-ui');
    expect(userText).not.toContain('createAccount');
    expect(userText).toContain('getSubjectsIdList');

    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
