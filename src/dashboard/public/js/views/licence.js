import { call } from '../api.js';
import { facts, h, mount, when } from '../dom.js';

/** Licence usage: the licence in force (or UNLICENSED) and the counted operations per day or month. */
export async function renderLicence(view, _params, ui) {
  const period = h(
    'select',
    { id: 'usage-period' },
    h('option', { value: 'DAY' }, 'per day'),
    h('option', { value: 'MONTH' }, 'per month'),
  );
  const area = h('div');
  const load = async () => {
    ui.clearError();
    try {
      const usage = await call('/admin/licensing/usage', { query: { period: period.value } });
      if (!ui.current()) return;
      const l = usage.licensing;
      mount(
        area,
        h(
          'div',
          { class: 'card' },
          facts([
            ['Mode', l.mode],
            ['State', l.state],
            ['Source', l.source],
            ['Licence', l.licenseId],
            ['In words', l.message],
            ['Window', `${when(usage.from)} – ${when(usage.to)}`],
          ]),
        ),
        h('h2', {}, 'Totals in the window'),
        h(
          'table',
          {},
          h('thead', {}, h('tr', {}, h('th', {}, 'Operation'), h('th', {}, 'Count'))),
          h(
            'tbody',
            {},
            usage.totals.length
              ? usage.totals.map((t) => h('tr', {}, h('td', {}, t.operation), h('td', {}, String(t.count))))
              : h('tr', {}, h('td', { colSpan: 2, class: 'muted' }, 'Nothing counted yet.')),
          ),
        ),
        h('h2', {}, `By ${period.value === 'DAY' ? 'day' : 'month'}`),
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Period', 'Operation', 'Count', 'Limit'].map((t) => h('th', {}, t)),
            ),
          ),
          h(
            'tbody',
            {},
            usage.entries.map((e) =>
              h(
                'tr',
                {},
                h('td', {}, new Date(e.periodStart).toLocaleDateString()),
                h('td', {}, e.operation),
                h('td', {}, String(e.count)),
                h('td', {}, e.limit !== undefined ? String(e.limit) : l.mode === 'UNLICENSED' ? 'unlimited' : '–'),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      ui.showError(error);
    }
  };
  period.addEventListener('change', () => void load());
  mount(
    view,
    h('h1', {}, 'Licence usage'),
    h('div', { class: 'row' }, h('label', { htmlFor: 'usage-period' }, 'Counts'), period),
    area,
  );
  await load();
}
