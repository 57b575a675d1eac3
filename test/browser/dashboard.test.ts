import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_PASSWORD, basic, bootForTest } from '../support/databases.js';
import { launchChromium } from '../support/browser.js';
import { serveOnLoopback } from '../support/serve.js';
import { send } from '../support/http.js';
import { closeSharedExtractor, sharedExtractorFactory } from '../support/extractor.js';
import { photo } from '../biometrics/helpers.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';
import { startDashboardChild, type DashboardChild } from '../../src/runtime/node-dashboard.js';
import { decodeImage } from '../../src/biometrics/image/decode.js';
import { encodePng } from '../../src/biometrics/image/encode.js';
import { cropResize } from '../../src/biometrics/image/image.js';
import { TOKEN_PADDING } from '../../src/biometrics/face/token-image.js';

/**
 * The dashboard end to end, in Debian's Chromium: the component started as `npm start` starts it (a child
 * process), the API forwarding /dashboard/ to it. Real photos of one man: with the default settings a second
 * photo is REJECTED outright; an administrator then raises deduplication.duplicateThreshold on the settings
 * page so that real duplicates go to adjudication; an adjudicator takes the cases, compares the faces (a
 * tightly cropped photo's token image padded with grey, not smeared edges), decides, and sees the decisions
 * counted; the administrator reads the subjects (whom each duplicates, with scores and links; who enrolled
 * it, by name; every operation naming it), the solved cases with their comments, and the operation log, whose
 * ENROLL operations follow their cases' outcomes. Screenshots go to test-artifacts/.
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
const enrol = async (subjectId: string, image: Uint8Array) =>
  answer(await call('POST', '/admin/subjects/create', { subjectId, faces: [{ image: b64(image) }] }), 201);
const operation = async (uuid: string) => answer(await call('GET', `/admin/operations/uuid/?uuid=${uuid}`));

/** A small, tight photo of a face (its detected box and a little more): the token frame reaches past it. */
async function tightCrop(bytes: Uint8Array): Promise<Uint8Array> {
  const checks = await answer(await call('POST', '/admin/operations/checkimage', { image: b64(bytes) }));
  const { x, y, width, height } = checks.faces[0].rectangle;
  const margin = 0.15;
  const [cx, cy, w, h] = [
    Math.round(x - width * margin),
    Math.round(y - height * margin),
    Math.round(width * (1 + 2 * margin)),
    Math.round(height * (1 + 2 * margin)),
  ];
  return encodePng(cropResize(await decodeImage(bytes), cx, cy, w, h, w, h));
}

/** A page whose waits allow for a loaded machine (the suite shares 2 cores with others; load 20+ seen). */
async function openPage(viewport: { viewport: { width: number; height: number } }) {
  const page = await browser.newPage(viewport);
  page.setDefaultTimeout(120_000);
  return page;
}

/** One client_credentials request to the token endpoint, as the sign-in form makes it. */
const tokenAttempt = (username: string, password: string) =>
  booted.app.request('/oauth2/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: username,
      client_secret: password,
    }).toString(),
  });

async function signIn(page: Page, username: string, password: string) {
  await page.fill('#username', username);
  await page.fill('#password', password);
  await page.click('#sign-in');
  await page.waitForSelector('#take-next');
}

/** The colours of an image's four corners, read back through a canvas (the image is a same-origin blob). */
function corners(page: Page, selector: string): Promise<number[][]> {
  return page.$eval(selector, (img) => {
    const i = img as HTMLImageElement;
    const canvas = document.createElement('canvas');
    canvas.width = i.naturalWidth;
    canvas.height = i.naturalHeight;
    const g = canvas.getContext('2d')!;
    g.drawImage(i, 0, 0);
    const at = (x: number, y: number) => Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3));
    return [at(0, 0), at(canvas.width - 1, 0), at(0, canvas.height - 1), at(canvas.width - 1, canvas.height - 1)];
  });
}

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  dashboard = await startDashboardChild(
    loadConfig({ BIMS_DASHBOARD_PORT: '0', BIMS_LOG_LEVEL: 'warn' }),
    createLogger('warn'),
  );
  booted = await bootForTest(
    'pglite',
    { DASHBOARD_URL: dashboard.config.DASHBOARD_URL! },
    { createExtractor: sharedExtractorFactory() },
  );
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
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()))
      problems.push(`console: ${m.text()}`);
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

// The cases run in order: each browses what the one before left behind.
describe('the dashboard in a real browser', () => {
  const cases: { near: number; tight: number } = { near: 0, tight: 0 };
  let rejectedUuid = '';

  it('with the defaults a real duplicate is REJECTED; an administrator sends them to adjudication from the settings page', async () => {
    await answer(
      await call('POST', '/admin/accounts/create', { username: USERNAME, password: PASSWORD, role: 'ADJUDICATOR' }),
      201,
    );
    expect((await enrol('franck-1', photo(franck('01829')))).status).toBe('ENROLLED');
    // Another photo of him scores far above the default duplicateThreshold: rejected without a human.
    const rejected = await enrol('franck-0', photo(franck('02683')));
    expect(rejected.status).toBe('REJECTED');
    rejectedUuid = rejected.enrollmentOperationUuid;

    const page = await openPage({ viewport: { width: 1280, height: 900 } });
    const problems = watch(page);
    await page.goto(`${api.url}/admin/dashboard/`);
    await page.waitForSelector('#username');
    // A wrong password reads as one, not as OAuth's "Client authentication failed".
    await page.fill('#username', 'admin');
    await page.fill('#password', 'not-the-password');
    await page.click('#sign-in');
    await page.waitForSelector('#login-error:not([hidden])');
    const said = await page.textContent('#login-error');
    expect(said).toMatch(/^The user name or password is not right/);
    expect(said).not.toMatch(/client/i);
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-sign-in-error.png` });
    // An account whose password was guessed at too often: the page says to wait, and how long.
    await answer(
      await call('POST', '/admin/accounts/create', {
        username: 'guessed-at',
        password: 'guessed-at-password-1',
        role: 'ADJUDICATOR',
      }),
      201,
    );
    for (let i = 0; i < 5; i++) expect((await tokenAttempt('guessed-at', `guess-${i}`)).status).toBe(401);
    await page.fill('#username', 'guessed-at');
    await page.fill('#password', 'guess-5');
    await page.click('#sign-in');
    await page.waitForFunction(() => /^Too many/.test(document.querySelector('#login-error')?.textContent ?? ''));
    expect(await page.textContent('#login-error')).toMatch(
      /^Too many failed sign-ins for this account\. Wait and try again in (1 second|([2-9]|\d\d+) seconds|1 minute|([2-9]|\d\d+) minutes)\.$/,
    );
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-sign-in-throttled.png` });
    await signIn(page, 'admin', ADMIN_PASSWORD);

    // Real duplicates score 80-114 on this scale: above 200 nothing is rejected outright, and everything at or
    // above adjudicationThreshold goes to a person.
    await page.click('#nav a[href="#/settings"]');
    const row = 'tr[data-key="deduplication.duplicateThreshold"]';
    await page.waitForSelector(row);
    await page.fill(`${row} input`, '200');
    await page.click(`${row} button:has-text("Save")`);
    await page.waitForFunction(
      (r) => /Saved/.test(document.querySelector(`${r} .field-error`)?.textContent ?? ''),
      row,
    );
    expect(
      (await answer(await call('GET', '/admin/management/setting?key=deduplication.duplicateThreshold'))).value,
    ).toBe(200);
    expect(problems).toEqual([]);
    await page.close();

    // Two more photos of him now wait for adjudication: a near-duplicate, and a small tight crop.
    const near = await enrol('franck-2', photo(franck('04000')));
    expect(near.status).toBe('PENDING_ADJUDICATION');
    const tight = await enrol('franck-tight', await tightCrop(photo(franck('02045'))));
    expect(tight.status).toBe('PENDING_ADJUDICATION');
    for (const [key, subjectId] of [
      ['near', 'franck-2'],
      ['tight', 'franck-tight'],
    ] as const) {
      cases[key] = (await answer(await call('GET', `/admin/adjudication/pending/list?subjectId=${subjectId}`)))[0].id;
    }
    expect((await operation(near.enrollmentOperationUuid)).status).toBe('PENDING_ADJUDICATION');
  }, 300_000);

  it('an adjudicator signs in through the proxy, compares the faces, decides; decisions are counted and the enrolments follow', async () => {
    const [pending] = await answer(await call('GET', '/admin/adjudication/pending/list?subjectId=franck-2'));
    const caseId = cases.near;
    const page = await openPage({ viewport: { width: 1280, height: 1000 } });
    const problems = watch(page);
    await page.goto(`${api.url}/dashboard/`);
    await page.waitForSelector('#username');

    // A wrong password is shown, in plain words.
    await page.fill('#username', USERNAME);
    await page.fill('#password', 'not-the-password');
    await page.click('#sign-in');
    await page.waitForSelector('#login-error:not([hidden])');
    expect(await page.textContent('#login-error')).toMatch(/^The user name or password is not right/);

    await page.fill('#password', PASSWORD);
    await page.click('#sign-in');
    await page.waitForSelector('#take-next');
    expect(await page.textContent('#who')).toContain(`${USERNAME} (ADJUDICATOR)`);
    // Adjudicators see the queue and the decisions.
    expect(await page.$$eval('#nav a', (links) => links.map((a) => a.textContent))).toEqual([
      'Adjudication',
      'Decisions',
      'Camera',
    ]);
    await page.waitForFunction(() => /2 pending/.test(document.querySelector('#queue-counts')?.textContent ?? ''));
    expect(await page.textContent('#decision-count')).toBe('0 decisions recorded');

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
    // Who enrolled the probe, by name (an adjudicator cannot look account ids up).
    expect(await page.textContent('[data-testid=enrolled-by]')).toMatch(/^admin on /);
    expect(await page.getAttribute('#decisions', 'data-count')).toBe('0');
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-adjudication-case.png`, fullPage: true });

    // Deciding without choosing is refused with a message; then enrol with a comment.
    await page.click('#decide');
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error')).toMatch(/Choose a decision/);
    await page.check('#decision-enrol');
    await page.fill('#comment', 'Same pose, different people: ears and jaw differ');
    await page.click('#decide');
    await page.waitForSelector('#solved-message');
    expect(await page.textContent('#solved-message')).toBe(
      `Case #${caseId} is solved: franck-2 is now ENROLLED and joins the gallery.`,
    );
    expect(await page.textContent(`[data-case-id="${caseId}"] h2 .badge`)).toBe('SOLVED');
    expect(await page.textContent('[data-testid=probe] .badge')).toBe('ENROLLED');
    // The decision shows at once, with its author and comment, and is counted.
    expect(await page.getAttribute('#decisions', 'data-count')).toBe('1');
    expect(await page.textContent('#decisions li')).toContain(USERNAME);
    expect(await page.textContent('#decisions li')).toContain('Same pose, different people: ears and jaw differ');
    await page.waitForFunction(() => document.querySelector('#decision-count')?.textContent === '1 decision recorded');
    await page.waitForFunction(() => /^1 pending/.test(document.querySelector('#queue-counts')?.textContent ?? ''));
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-adjudication-solved.png`, fullPage: true });

    // The small tight photo: its token image (the main image) reaches past the photo, padded with flat grey.
    await page.click('#take-next');
    await page.waitForSelector(`[data-case-id="${cases.tight}"]`);
    await imagesShown(page, '[data-testid=probe] img');
    expect(await page.getAttribute('[data-testid=probe] img.main', 'alt')).toBe('token image');
    for (const colour of await corners(page, '[data-testid=probe] img.main'))
      expect(colour).toEqual([...TOKEN_PADDING]);
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-token-padding.png`, fullPage: true });
    await page.check('#decision-reject');
    await page.selectOption('#duplicate-of', 'franck-1');
    await page.fill('#comment', 'Same man as franck-1: the scar above the left eyebrow');
    await page.click('#decide');
    await page.waitForSelector('#solved-message');
    expect(await page.textContent('#solved-message')).toBe(
      `Case #${cases.tight} is solved: franck-tight is now REJECTED as a duplicate.`,
    );
    await page.waitForFunction(() => document.querySelector('#decision-count')?.textContent === '2 decisions recorded');

    // Nothing else waits.
    await page.click('#take-next');
    await page.waitForSelector('#queue-empty');

    // The decisions page lists both, newest first, with their comments; one opens its solved case.
    await page.click('#decision-count');
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr.link').length === 2);
    const rows = await page.$$eval('main tbody tr.link', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(rows[0]).toContain('the scar above the left eyebrow');
    expect(rows[1]).toContain('ears and jaw differ');
    await page.click('main tbody tr.link >> nth=1');
    await page.waitForSelector(`[data-case-id="${caseId}"]`);
    expect(await page.textContent(`[data-case-id="${caseId}"] h2`)).toContain('NOT_DUPLICATE');
    expect(await page.textContent('#decisions li')).toContain('ears and jaw differ');
    expect(await page.$('#decide')).toBeNull();
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-adjudicator-decisions.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.close();

    // The API agrees: solved store, the decision with its comment, the subject enrolled, and the ENROLL
    // operations no longer PENDING_ADJUDICATION but what their cases decided.
    const solved = await answer(await call('GET', `/admin/adjudication/solved?id=${caseId}`));
    expect(solved.adjudication).toMatchObject({ id: caseId, outcome: 'NOT_DUPLICATE', subjectId: 'franck-2' });
    expect(solved.adjudication.decisions).toEqual([
      expect.objectContaining({
        username: USERNAME,
        decision: 'NOT_DUPLICATE',
        comment: 'Same pose, different people: ears and jaw differ',
      }),
    ]);
    expect((await answer(await call('GET', '/admin/subjects/franck-2'))).status).toBe('ENROLLED');
    expect((await operation(solved.adjudication.operationUuid)).status).toBe('SUCCESS');
    const tightCase = await answer(await call('GET', `/admin/adjudication/solved?id=${cases.tight}`));
    expect((await operation(tightCase.adjudication.operationUuid)).status).toBe('DUPLICATE_FOUND');
    expect(await answer(await call('GET', '/admin/adjudication/pending/list/count'))).toEqual({ count: 0 });
  }, 300_000);

  it('an administrator reads whom each subject duplicates, who enrolled it, its history, and the solved cases', async () => {
    // One more photo of him stays pending while the administrator looks.
    const waiting = await enrol('franck-3', photo(franck('02888')));
    expect(waiting.status).toBe('PENDING_ADJUDICATION');
    const waitingCase = (await answer(await call('GET', '/admin/adjudication/pending/list?subjectId=franck-3')))[0].id;
    // The adjudicator has taken it and is looking at it.
    expect(
      (
        await answer(
          await send(
            booted.app,
            'GET',
            '/adjudicator/adjudication/pending/oncoming',
            undefined,
            basic(USERNAME, PASSWORD),
          ),
        )
      ).adjudication.id,
    ).toBe(waitingCase);
    const rejectedOp = await operation(rejectedUuid);
    const waitingOp = await operation(waiting.enrollmentOperationUuid);

    const page = await openPage({ viewport: { width: 1280, height: 900 } });
    const problems = watch(page);
    await page.goto(`${api.url}/admin/dashboard/`);
    await signIn(page, 'admin', ADMIN_PASSWORD);
    expect(await page.$$eval('#nav a', (links) => links.map((a) => a.textContent))).toEqual([
      'Adjudication',
      'Solved cases',
      'Decisions',
      'Subjects',
      'Operations',
      'Settings',
      'Licence',
      'Camera',
    ]);

    await page.click('#nav a[href="#/subjects"]');
    await page.fill('#filter-subjectId', 'franck');
    await page.click('form.row button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr.link').length === 5);

    // REJECTED at enrolment: whom it duplicates, with the score and the threshold, and a link to him.
    await page.click('main tbody tr.link:has-text("franck-0")');
    await page.waitForSelector('h1:has-text("Subject franck-0")');
    await page.waitForSelector('[data-testid=duplicates]');
    expect(await page.textContent('#verdict')).toBe(
      `Enrolment found a duplicate scoring ${rejectedOp.score.toFixed(1)}, at or above the duplicate threshold ${rejectedOp.threshold.toFixed(1)}.`,
    );
    expect(
      await page.$$eval('[data-testid=duplicates] tbody a', (as) => as.map((a) => a.getAttribute('href'))),
    ).toEqual(['#/subjects/franck-1']);
    expect(Number(await page.textContent('[data-testid=candidate-score]'))).toBeCloseTo(
      rejectedOp.candidates[0].score,
      1,
    );
    // Who enrolled it, by name, with its operation; and its history.
    expect(await page.textContent('[data-testid=enrolled-by]')).toMatch(
      new RegExp(`^admin on .* \\(operation #${rejectedOp.id}\\)$`),
    );
    expect(await page.textContent('[data-testid=history] tbody')).toContain('DUPLICATE_FOUND');
    expect((await imagesShown(page, '.gallery img')).every((w) => w > 0)).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-subject-rejected.png`, fullPage: true });
    await page.click('[data-testid=duplicates] tbody a');
    await page.waitForSelector('h1:has-text("Subject franck-1")');

    // PENDING: its possible duplicates with scores, and the case waiting for it, which opens in the queue.
    await page.goto(`${api.url}/admin/dashboard/#/subjects/franck-3`);
    await page.waitForSelector('[data-testid=duplicates]');
    expect(await page.textContent('#verdict')).toContain(`case #${waitingCase} waits for an adjudicator`);
    const shown = await page.$$eval('[data-testid=duplicates] tbody tr', (trs) =>
      trs.map((tr) => [
        tr.querySelector('a')?.textContent,
        tr.querySelector('[data-testid=candidate-score]')?.textContent,
      ]),
    );
    expect(shown).toEqual(
      waitingOp.candidates.map((c: { subjectId: string; score: number }) => [c.subjectId, c.score.toFixed(1)]),
    );
    expect(shown.map(([s]) => s)).toEqual(expect.arrayContaining(['franck-1', 'franck-2']));
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-subject-pending.png`, fullPage: true });
    await page.click(`#verdict a[href="#/queue/${waitingCase}"]`);
    await page.waitForSelector(`[data-case-id="${waitingCase}"]`);
    // The queue names who is reviewing the case, not an account id.
    const queued = `#pending-list tbody tr:has-text("franck-3")`;
    await page.waitForSelector(queued);
    expect(await page.$$eval(`${queued} td`, (tds) => tds.map((td) => td.textContent))).toEqual([
      `#${waitingCase}`,
      'franck-3',
      'ASSIGNED',
      expect.stringMatching(/^franck-[12] \(\d+\.\d\)$/),
      expect.any(String),
      USERNAME,
      'none',
    ]);

    // REJECTED by an adjudicator: whom he named, the case with the decision and its comment; the ENROLL
    // operation in the history says DUPLICATE_FOUND, not PENDING_ADJUDICATION.
    await page.goto(`${api.url}/admin/dashboard/#/subjects/franck-tight`);
    await page.waitForSelector('[data-testid=cases]');
    expect(await page.textContent('#verdict')).toBe(
      `An adjudicator judged it the same person as franck-1 in case #${cases.tight}.`,
    );
    expect(await page.textContent('[data-testid=cases]')).toContain(
      `${USERNAME}: DUPLICATE – “Same man as franck-1: the scar above the left eyebrow”`,
    );
    const history = await page.$$eval('[data-testid=history] tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(history).toHaveLength(1);
    expect(history[0]).toContain('ENROLL');
    expect(history[0]).toContain('DUPLICATE_FOUND');
    expect(history[0]).toContain('admin');

    // ENROLLED through adjudication: its enrolment reads SUCCESS.
    await page.goto(`${api.url}/admin/dashboard/#/subjects/franck-2`);
    await page.waitForSelector('[data-testid=history]');
    expect(await page.$('[data-testid=duplicates]')).toBeNull();
    expect(await page.textContent('[data-testid=history] tbody')).toContain('SUCCESS');
    expect(await page.textContent('[data-testid=history] tbody')).not.toContain('PENDING_ADJUDICATION');
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-subject-history.png`, fullPage: true });

    // The solved cases, newest first, with outcomes, decisions and comments; one opens with its faces.
    await page.click('#nav a[href="#/solved"]');
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr.link').length === 2);
    const solvedRows = await page.$$eval('main tbody tr.link', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(solvedRows[0]).toContain('franck-tight');
    expect(solvedRows[0]).toContain('DUPLICATE of franck-1');
    expect(solvedRows[0]).toContain(`${USERNAME}: DUPLICATE “Same man as franck-1: the scar above the left eyebrow”`);
    expect(solvedRows[1]).toContain('ears and jaw differ');
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-solved-cases.png`, fullPage: true });
    await page.click('main tbody tr.link:has-text("franck-2")');
    await page.waitForSelector(`[data-case-id="${cases.near}"]`);
    expect((await imagesShown(page, '[data-testid=probe] img')).every((w) => w > 0)).toBe(true);
    expect(await page.textContent('#decisions')).toContain('ears and jaw differ');
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-solved-case.png`, fullPage: true });

    // The operation log names accounts, and the ENROLL operations read as their enrolments ended.
    await page.click('#nav a[href="#/operations"]');
    await page.selectOption('#filter-type', 'ENROLL');
    await page.click('form.row button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('main tbody tr.link').length === 5);
    const ops = await page.$$eval('main tbody tr.link', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    );
    expect(ops.map((cells) => cells[6])).toEqual(Array(5).fill('admin'));
    expect(ops.map((cells) => cells[3]).sort()).toEqual([
      'DUPLICATE_FOUND',
      'DUPLICATE_FOUND',
      'PENDING_ADJUDICATION',
      'SUCCESS',
      'SUCCESS',
    ]);
    await page.click('main tbody tr.link >> nth=0');
    await page.waitForSelector('h1:has-text("ENROLL")');
    expect(await page.textContent('[data-testid=operation-by]')).toBe('admin');
    expect((await imagesShown(page, '.gallery img')).every((w) => w > 0)).toBe(true);

    // A value out of range is refused by the API, and the page says why, naming the key.
    await page.click('#nav a[href="#/settings"]');
    const row = 'tr[data-key="adjudication.requiredDecisions"]';
    await page.waitForSelector(row);
    await page.fill(`${row} input`, '0');
    await page.click(`${row} button:has-text("Save")`);
    await page.waitForFunction((r) => /\S/.test(document.querySelector(`${r} .field-error`)?.textContent ?? ''), row);
    expect(await page.textContent(`${row} .field-error`)).toBe(
      "Setting 'adjudication.requiredDecisions': must be at least 1",
    );
    await page.fill(`${row} input`, '2');
    await page.click(`${row} button:has-text("Save")`);
    await page.waitForFunction(
      (r) => /Saved/.test(document.querySelector(`${r} .field-error`)?.textContent ?? ''),
      row,
    );
    expect(
      (await answer(await call('GET', '/admin/management/setting?key=adjudication.requiredDecisions'))).value,
    ).toBe(2);

    await page.click('#nav a[href="#/licence"]');
    await page.waitForSelector('main dl.facts');
    expect(await page.textContent('main')).toContain('UNLICENSED');
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-licence.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, 300_000);
});
