import { onSignedOut, session, signOut } from './api.js';
import { h, mount } from './dom.js';
import { releaseImages } from './images.js';
import { renderLogin } from './views/login.js';
import { renderQueue } from './views/queue.js';
import { renderSubjects, renderSubject } from './views/subjects.js';
import { renderOperations, renderOperation } from './views/operations.js';
import { renderSettings } from './views/settings.js';
import { renderLicence } from './views/licence.js';
import { renderCase, renderDecisions, renderSolved } from './views/history.js';

/**
 * The dashboard's shell: hash routes (#/queue, #/subjects/alice ...) so the proxy serves one page whatever
 * the view, a navigation bar fitted to the signed-in role, and one place where errors are shown.
 */

const routes = [
  { pattern: /^\/queue$/, render: renderQueue, nav: 'Adjudication', href: '#/queue', roles: ['ADMIN', 'ADJUDICATOR'] },
  { pattern: /^\/queue\/(\d+)$/, render: renderQueue, roles: ['ADMIN'] },
  { pattern: /^\/solved$/, render: renderSolved, nav: 'Solved cases', href: '#/solved', roles: ['ADMIN'] },
  {
    pattern: /^\/decisions$/,
    render: renderDecisions,
    nav: 'Decisions',
    href: '#/decisions',
    roles: ['ADMIN', 'ADJUDICATOR'],
  },
  { pattern: /^\/cases\/(\d+)$/, render: renderCase, roles: ['ADMIN', 'ADJUDICATOR'] },
  { pattern: /^\/subjects$/, render: renderSubjects, nav: 'Subjects', href: '#/subjects', roles: ['ADMIN'] },
  { pattern: /^\/subjects\/(.+)$/, render: renderSubject, roles: ['ADMIN'] },
  { pattern: /^\/operations$/, render: renderOperations, nav: 'Operations', href: '#/operations', roles: ['ADMIN'] },
  { pattern: /^\/operations\/(\d+)$/, render: renderOperation, roles: ['ADMIN'] },
  { pattern: /^\/settings$/, render: renderSettings, nav: 'Settings', href: '#/settings', roles: ['ADMIN'] },
  { pattern: /^\/licence$/, render: renderLicence, nav: 'Licence', href: '#/licence', roles: ['ADMIN'] },
];

const view = document.getElementById('view');
const errorBox = document.getElementById('error');

/** Show an error to the reader (a failed call's problem detail, or any other failure). */
export function showError(error) {
  const message = error instanceof Error ? error.message : String(error);
  errorBox.textContent = message;
  errorBox.hidden = false;
}

export function clearError() {
  errorBox.hidden = true;
  errorBox.textContent = '';
}

function renderChrome(s, current) {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  if (!s) {
    mount(nav);
    mount(who);
    return;
  }
  mount(
    nav,
    routes
      .filter((r) => r.nav && r.roles.includes(s.role))
      .map((r) => h('a', { href: r.href, class: current === r ? 'current' : null }, r.nav)),
    // A page of its own (the only one allowed the camera), not a view of this one.
    h('a', { href: 'capture.html', id: 'nav-camera' }, 'Camera'),
  );
  mount(
    who,
    h('span', {}, `${s.username} (${s.role})`),
    h(
      'button',
      {
        class: 'secondary',
        id: 'sign-out',
        onclick: () => {
          signOut();
          location.hash = '#/login';
        },
      },
      'Sign out',
    ),
  );
}

let generation = 0;

async function route() {
  const path = location.hash.replace(/^#/, '') || '/queue';
  const s = session();
  releaseImages();
  clearError();
  const mine = ++generation;
  if (path === '/login' || !s) {
    renderChrome(null);
    if (path !== '/login') {
      history.replaceState(null, '', '#/login');
    }
    renderLogin(view, {
      onSignedIn: () => {
        location.hash = '#/queue';
      },
    });
    return;
  }
  const match = routes.map((r) => ({ r, m: path.match(r.pattern) })).find((x) => x.m);
  renderChrome(s, match?.r);
  if (!match) {
    mount(view, h('p', {}, 'There is no such page. '), h('a', { href: '#/queue' }, 'Go to the adjudication queue'));
    return;
  }
  if (!match.r.roles.includes(s.role)) {
    mount(
      view,
      h(
        'p',
        {},
        `This page is for ${match.r.roles.includes('ADJUDICATOR') ? 'adjudicators and administrators' : 'administrators'}; you are signed in as ${s.role}. `,
      ),
      h('a', { href: 'capture.html' }, 'Enrol or verify with your camera'),
    );
    return;
  }
  mount(view, h('p', { class: 'muted' }, 'Loading…'));
  try {
    // A page stale by the time its data arrives (the reader moved on) is not drawn.
    await match.r.render(view, match.m.slice(1).map(decodeURIComponent), {
      showError,
      clearError,
      current: () => mine === generation,
    });
  } catch (error) {
    if (mine === generation) {
      showError(error);
      if (view.textContent === 'Loading…') mount(view);
    }
  }
}

onSignedOut.addEventListener('signed-out', () => {
  if (location.hash !== '#/login') location.hash = '#/login';
});
addEventListener('hashchange', route);
addEventListener('unhandledrejection', (event) => showError(event.reason));
route();
