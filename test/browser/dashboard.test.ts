import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, bootForTest } from '../support/databases.js';
import { launchChromium } from '../support/browser.js';
import { serveOnLoopback } from '../support/serve.js';
import { send } from '../support/http.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/services/logger.js';
import { startDashboardChild, type DashboardChild } from '../../src/runtime/node-dashboard.js';

/**
 * The dashboard end to end, in Debian's Chromium: the component started as `npm start` starts it (a child
 * process), the API forwarding /dashboard/ to it, and an adjudicator who signs in through the proxy, takes
 * the case a near-duplicate enrolment opened, sees both faces side by side, and enrols the probe. The API
 * then shows the case solved and the subject ENROLLED. Screenshots go to test-artifacts/.
 */

const ARTIFACTS = 'test-artifacts';
const USERNAME = 'ada-adjudicator';
const PASSWORD = 'adjudicator-password-1';
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const franck = (n: string) => `labelled/franck/franck_${n}.jpg`;

let dashboard: DashboardChild;
let booted: Awaited<ReturnType<typeof bootForTest>>;
let api: Awaited<ReturnType<typeof serveOnLoopback>>;
let browser: Browser;

const answer = async (res: Response, status = 200) => {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return text ? JSON.parse(text) : null;
};
const call = (method: string, path: string, body?: unknown) => send(booted.app, method, path, body);

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  dashboard = await startDashboardChild(loadConfig({ BIMS_DASHBOARD_PORT: '0', BIMS_LOG_LEVEL: 'warn' }), createLogger('warn'));
  booted = await bootForTest('pglite', { DASHBOARD_URL: dashboard.config.DASHBOARD_URL! }, { createExtractor: sharedExtractorFactory() });
  api = await serveOnLoopback(booted.app.fetch);
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await booted?.close();
  await dashboard?.stop();
  await closeSharedExtractor();
});

/**
 * Problems the page would hide from a reader: script errors, CSP violations, failed requests, server errors.
 * Chromium also logs every 4xx answer to the console; the test provokes some on purpose (a wrong password,
 * a value out of range) and checks what the page shows for them, so those lines are not counted here.
 */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 500) problems.push(`answer: ${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(`page: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request: ${r.url()} ${r.failure()?.errorText}`));
  return problems;
}

/** Wait until every image in the selector has been decoded (a broken image has naturalWidth 0). */
async function imagesShown(page: Page, selector: string): Promise<number[]> {
  await page.waitForFunction((s) => {
    const images = [...document.querySelectorAll<HTMLImageElement>(s)];
    return images.length > 0 && images.every((i) => i.complete);
  }, selector);
  return page.$$eval(selector, (images) => (images as HTMLImageElement[]).map((i) => i.naturalWidth));
}

// The two cases run in order: the administrator's tour browses what the adjudicator's case left behind.
describe('the dashboard in a real browser', () => {
  it('an adjudicator signs in through the proxy, compares the faces and enrols the probe; the API shows it solved', async () => {
    // A near-duplicate: another photo of someone already enrolled, scored between the two thresholds.
    await answer(await call('POST', '/admin/accounts/create', { username: USERNAME, password: PASSWORD, role: 'ADJUDICATOR' }), 201);
    expect((await answer(await call('POST', '/admin/subjects/create', { subjectId: 'franck-1', faces: [{ image: b64(photo(franck('01829'))) }] }), 201)).status).toBe('ENROLLED');
    await answer(await call('POST', '/admin/management/settings', { key: 'deduplication.duplicateThreshold', value: 200 }));
    const probe = await answer(await call('POST', '/admin/subjects/create', { subjectId: 'franck-2', faces: [{ image: b64(photo(franck('04000'))) }] }), 201);
    expect(probe.status).toBe('PENDING_ADJUDICATION');
    const [pending] = await answer(await call('GET', '/admin/adjudication/pending/list?subjectId=franck-2'));
    const caseId: number = pending.id;

    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const problems = watch(page);
    await page.goto(`${api.url}/dashboard/`);
    await page.waitForSelector('#username');

    // A wrong password is shown, not swallowed.
    await page.fill('#username', USERNAME);
    await page.fill('#password', 'not-the-password');
    await page.click('#sign-in');
    await page.waitForSelector('#login-error:not([hidden])');
    expect(await page.textContent('#login-error')).toMatch(/\S/);

    await page.fill('#password', PASSWORD);
    await page.click('#sign-in');
    await page.waitForSelector('#take-next');
    expect(await page.textContent('#who')).toContain(`${USERNAME} (ADJUDICATOR)`);
    // Adjudicators see the queue only.
    expect(await page.$$eval('#nav a', (links) => links.map((a) => a.textContent))).toEqual(['Adjudication']);
    await page.waitForFunction(() => /1 pending/.test(document.querySelector('#queue-counts')?.textContent ?? ''));

    await page.click('#take-next');
    await page.waitForSelector(`[data-case-id="${caseId}"]`);
    // Both faces side by side, decoded, with the candidate's score.
    const probeImages = await imagesShown(page, '[data-testid=probe] img');
    const candidateImages = await imagesShown(page, '[data-testid=candidate] img');
    expect(probeImages.length).toBeGreaterThanOrEqual(2);
    expect(candidateImages.length).toBeGreaterThanOrEqual(1);
    for (const width of [...probeImages, ...candidateImages]) expect(width).toBeGreaterThan(0);
    expect(await page.textContent('[data-testid=probe] h3')).toBe('Probe: franck-2');
    expect(await page.textContent('[data-testid=candidate] h3')).toContain('franck-1');
    const shownScore = Number(await page.textContent('[data-testid=candidate] [data-testid=score]'));
    expect(shownScore).toBeCloseTo(pending.candidates[0].score, 1);
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-adjudication-case.png`, fullPage: true });

    // Deciding without choosing is refused with a message; then enrol with a comment.
    await page.click('#decide');
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error')).toMatch(/Choose a decision/);
    await page.check('#decision-enrol');
    await page.fill('#comment', 'Same pose, different people: ears and jaw differ');
    await page.click('#decide');
    await page.waitForSelector('#solved-message');
    expect(await page.textContent('#solved-message')).toBe(`Case #${caseId} is solved: franck-2 is now ENROLLED and joins the gallery.`);
    expect(await page.textContent(`[data-case-id="${caseId}"] h2 .badge`)).toBe('SOLVED');
    expect(await page.textContent('[data-testid=probe] .badge')).toBe('ENROLLED');
    await page.waitForFunction(() => /^0 pending/.test(document.querySelector('#queue-counts')?.textContent ?? ''));
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-adjudication-solved.png`, fullPage: true });

    // Nothing else waits.
    await page.click('#take-next');
    await page.waitForSelector('#queue-empty');
    expect(problems).toEqual([]);
    await page.close();

    // The API agrees: solved store, the decision with its comment, the subject enrolled.
    const solved = await answer(await call('GET', `/admin/adjudication/solved?id=${caseId}`));
    expect(solved.adjudication).toMatchObject({ id: caseId, outcome: 'NOT_DUPLICATE', subjectId: 'franck-2' });
    expect(solved.adjudication.decisions).toEqual([
      expect.objectContaining({ username: USERNAME, decision: 'NOT_DUPLICATE', comment: 'Same pose, different people: ears and jaw differ' }),
    ]);
    expect((await answer(await call('GET', '/admin/subjects/franck-2'))).status).toBe('ENROLLED');
    expect(await answer(await call('GET', '/admin/adjudication/pending/list/count'))).toEqual({ count: 0 });
  });

  it('an administrator browses subjects and operations with their images, and edits a setting', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = watch(page);
    await page.goto(`${api.url}/admin/dashboard/`);
    await page.fill('#username', 'admin');
    await page.fill('#password', ADMIN_PASSWORD);
    await page.click('#sign-in');
    await page.waitForSelector('#take-next');
    expect(await page.$$eval('#nav a', (links) => links.map((a) => a.textContent))).toEqual(['Adjudication', 'Subjects', 'Operations', 'Settings', 'Licence']);

    await page.click('#nav a[href="#/subjects"]');
    await page.fill('#filter-subjectId', 'franck');
    await page.click('form.row button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr.link').length === 2);
    await page.click('main tbody tr.link:has-text("franck-2")');
    await page.waitForSelector('h1:has-text("Subject franck-2")');
    expect((await imagesShown(page, '.gallery img')).every((w) => w > 0)).toBe(true);

    await page.click('#nav a[href="#/operations"]');
    await page.selectOption('#filter-type', 'ENROLL');
    await page.click('form.row button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr.link').length === 2);
    await page.click('main tbody tr.link >> nth=0');
    await page.waitForSelector('h1:has-text("ENROLL")');
    expect((await imagesShown(page, '.gallery img')).every((w) => w > 0)).toBe(true);

    // A value out of range is refused by the API, and the page says why, naming the key.
    await page.click('#nav a[href="#/settings"]');
    const row = 'tr[data-key="adjudication.requiredDecisions"]';
    await page.waitForSelector(row);
    await page.fill(`${row} input`, '0');
    await page.click(`${row} button:has-text("Save")`);
    await page.waitForFunction((r) => /\S/.test(document.querySelector(`${r} .field-error`)?.textContent ?? ''), row);
    expect(await page.textContent(`${row} .field-error`)).toBe("Setting 'adjudication.requiredDecisions': Too small: expected number to be >=1");
    await page.fill(`${row} input`, '2');
    await page.click(`${row} button:has-text("Save")`);
    await page.waitForFunction((r) => /Saved/.test(document.querySelector(`${r} .field-error`)?.textContent ?? ''), row);
    expect((await answer(await call('GET', '/admin/management/setting?key=adjudication.requiredDecisions'))).value).toBe(2);

    await page.click('#nav a[href="#/licence"]');
    await page.waitForSelector('main dl.facts');
    expect(await page.textContent('main')).toContain('UNLICENSED');
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-licence.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });
});
