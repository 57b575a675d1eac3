import { call, session, surfaces } from '../api.js';
import { accountLabel, accountNames } from '../accounts.js';
import { badge, h, mount, score, table, when } from '../dom.js';
import { showCase } from './case.js';

/**
 * The adjudication queue: take the oncoming case (the API leases it to the caller), compare the probe's face
 * with each candidate's side by side with their scores, and record a decision with a comment. An ADMIN may
 * also open any pending case from the list (conflicted ones are theirs to settle).
 */
export async function renderQueue(view, [openId], ui) {
  const base = `${surfaces().adjudication}/adjudication`;
  const isAdmin = session()?.role === 'ADMIN';
  const counts = h('span', { class: 'muted', id: 'queue-counts' });
  // How many decisions the service holds, refreshed with the queue: a decision just recorded counts at once.
  const decided = h('a', { href: '#/decisions', id: 'decision-count' });
  const caseArea = h('section', { id: 'case' });
  const listArea = h('div', { id: 'pending-list' });
  const take = h('button', { id: 'take-next', onclick: () => void takeNext() }, 'Take the next case');
  // Who holds each leased case, by name (an ADMIN's view; adjudicators cannot list accounts).
  const names = await accountNames();

  const refresh = async () => {
    const [all, open, conflicted, decisions] = await Promise.all([
      ...[undefined, 'OPEN', 'CONFLICTED'].map((status) => call(`${base}/pending/list/count`, { query: { status } })),
      call(`${base}/decision/list/count`),
    ]);
    if (!ui.current()) return;
    counts.textContent = `${all.count} pending: ${open.count} waiting, ${all.count - open.count - conflicted.count} being reviewed, ${conflicted.count} conflicted`;
    decided.textContent = `${decisions.count} decision${decisions.count === 1 ? '' : 's'} recorded`;
    const rows = await call(`${base}/pending/list`, { query: { size: 50, sort: 'createdAt,asc' } });
    if (!ui.current()) return;
    mount(
      listArea,
      table(
        [
          { label: 'Case', value: (r) => `#${r.id}` },
          { label: 'Probe subject', value: (r) => r.subjectId },
          { label: 'Status', value: (r) => badge(r.status) },
          {
            label: 'Best candidate',
            value: (r) => (r.candidates[0] ? `${r.candidates[0].subjectId} (${score(r.candidates[0].score)})` : ''),
          },
          { label: 'Opened', value: (r) => when(r.createdAt) },
          {
            label: 'Reviewed by',
            value: (r) =>
              r.status === 'ASSIGNED' ? (isAdmin ? accountLabel(names, r.assignedTo) : 'an adjudicator') : '',
          },
          {
            label: 'Decisions',
            value: (r) =>
              r.decisions.length
                ? r.decisions.map((d) => `${d.username ?? `account #${d.accountId}`}: ${d.decision}`).join('; ')
                : 'none',
          },
        ],
        rows,
        isAdmin ? (r) => void openCase(r.id) : undefined,
      ),
      isAdmin
        ? h('p', { class: 'muted' }, 'Click a case to review it; as an administrator your decision is final.')
        : null,
    );
  };

  const afterDecision = () => {
    take.disabled = false;
    void refresh().catch(ui.showError);
  };

  async function takeNext() {
    ui.clearError();
    take.disabled = true;
    try {
      const review = await call(`${base}/pending/oncoming`);
      if (!ui.current()) return;
      if (!review) {
        mount(
          caseArea,
          h(
            'p',
            { class: 'notice', id: 'queue-empty' },
            'No case is waiting for you. Cases appear when an enrolment finds a possible duplicate.',
          ),
        );
      } else {
        await showCase(caseArea, review, { base, store: 'pending', ui, onDecided: afterDecision });
      }
      await refresh();
    } catch (error) {
      ui.showError(error);
    } finally {
      take.disabled = false;
    }
  }

  async function openCase(id) {
    ui.clearError();
    try {
      await showCase(caseArea, await call(`${base}/pending`, { query: { id } }), {
        base,
        store: 'pending',
        ui,
        onDecided: afterDecision,
      });
      caseArea.scrollIntoView({ behavior: 'smooth' });
    } catch (error) {
      ui.showError(error);
    }
  }

  mount(
    view,
    h('h1', {}, 'Adjudication queue'),
    h('div', { class: 'row' }, take, counts, decided),
    caseArea,
    h('h2', {}, 'Pending cases'),
    listArea,
  );
  await refresh();
  // #/queue/<id>: an ADMIN opened a pending case from elsewhere (a subject's page).
  if (openId && isAdmin) await openCase(Number(openId));
}
